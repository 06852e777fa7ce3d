//go:build amd64 && !purego

#include "textflag.h"

// func dotInt8AVX2(a, b *int8, n int) int32
//
// Sign-extends 16 int8 of each vector to int16 (VPMOVSXBW), multiplies
// them and adds adjacent pairs into 8 int32 (VPMADDWD), 64 elements per
// iteration into four accumulators; then 16 at a time into the first,
// then the last n%16 one by one. int32 wraps as the Go kernel does.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	XORL AX, AX
	CMPQ CX, $16
	JLT  tail
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	CMPQ CX, $64
	JLT  loop16

loop64:
	VPMOVSXBW (SI), Y0
	VPMOVSXBW (DI), Y1
	VPMOVSXBW 16(SI), Y2
	VPMOVSXBW 16(DI), Y3
	VPMOVSXBW 32(SI), Y4
	VPMOVSXBW 32(DI), Y5
	VPMOVSXBW 48(SI), Y6
	VPMOVSXBW 48(DI), Y7
	VPMADDWD  Y1, Y0, Y0
	VPMADDWD  Y3, Y2, Y2
	VPMADDWD  Y5, Y4, Y4
	VPMADDWD  Y7, Y6, Y6
	VPADDD    Y0, Y8, Y8
	VPADDD    Y2, Y9, Y9
	VPADDD    Y4, Y10, Y10
	VPADDD    Y6, Y11, Y11
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JGE  loop64
	CMPQ CX, $16
	JLT  reduce

loop16:
	VPMOVSXBW (SI), Y0
	VPMOVSXBW (DI), Y1
	VPMADDWD  Y1, Y0, Y0
	VPADDD    Y0, Y8, Y8
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE  loop16

reduce:
	VPADDD       Y9, Y8, Y8
	VPADDD       Y11, Y10, Y10
	VPADDD       Y10, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD       X9, X8, X8
	VPSHUFD      $0x4e, X8, X9
	VPADDD       X9, X8, X8
	VPSHUFD      $0xb1, X8, X9
	VPADDD       X9, X8, X8
	VMOVD        X8, AX
	VZEROUPPER

tail:
	TESTQ CX, CX
	JEQ   done

tailloop:
	MOVBLSX (SI), DX
	MOVBLSX (DI), BX
	IMULL   BX, DX
	ADDL    DX, AX
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JNE     tailloop

done:
	MOVL AX, ret+24(FP)
	RET
