//go:build !linux

package engine

// statfsSpecial is the Linux statfs check; other systems have no pseudo
// filesystems of this kind below ordinary paths.
func statfsSpecial(string) string { return "" }
