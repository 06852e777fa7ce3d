package engine

import (
	"crypto/rand"
	"encoding/hex"
)

// Sizes of the engine's random IDs.
const (
	// defaultIDBytes is the number of random bytes the engine's own IDs (job
	// IDs) use: 16 bytes, 128 bits of entropy, 32 hexadecimal characters.
	defaultIDBytes = 16

	// randomHexIDLen is the length of an ID of defaultIDBytes random bytes:
	// 32 lower-case hexadecimal characters.
	randomHexIDLen = 2 * defaultIDBytes
)

// NewRandomHexID returns a new random ID of 2·nBytes lower-case hexadecimal
// characters encoding nBytes bytes from crypto/rand, suitable for job IDs,
// feedback entry IDs and other identifiers that must not be guessable or
// collide (16 bytes, 128 bits, is a good size for those). nBytes <= 0 means
// 16 bytes (32 characters, the size of the engine's own IDs), so the
// result is never empty. It is safe for concurrent
// use.
func NewRandomHexID(nBytes int) string {
	if nBytes <= 0 {
		nBytes = defaultIDBytes
	}
	b := make([]byte, nBytes)
	// crypto/rand.Read never returns an error (since Go 1.24 a failing
	// system random source crashes the program instead).
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
