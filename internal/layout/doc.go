// Package layout holds no code: its test checks the rules of Muster's package layout
// that the compiler does not, so `go test ./...` keeps them true.
package layout
