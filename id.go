package engine

import (
	"crypto/rand"
	"encoding/hex"
)

// RandomHexIDLen is the length of the IDs NewRandomHexID returns: 32
// lower-case hexadecimal characters, encoding 16 random bytes (128 bits).
const RandomHexIDLen = 32

// NewRandomHexID returns a new random ID of RandomHexIDLen lower-case
// hexadecimal characters (16 bytes from crypto/rand, 128 bits of entropy),
// suitable for job IDs, feedback entry IDs and other identifiers that must
// not be guessable or collide. It is safe for concurrent use.
func NewRandomHexID() string {
	var b [RandomHexIDLen / 2]byte
	// crypto/rand.Read never returns an error (since Go 1.24 a failing
	// system random source crashes the program instead).
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
