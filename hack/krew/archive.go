package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// versionVar is the variable musterctl's version command prints.
const versionVar = "github.com/musterhq/muster/cmd/musterctl/app.version"

// buildArchive builds musterctl for p at version into work and writes its archive into
// dist, returning the archive's sha256.
func buildArchive(p platform, version, work, dist string) (string, error) {
	bin := filepath.Join(work, fmt.Sprintf("musterctl_%s_%s", p.OS, p.Arch))
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X "+versionVar+"="+version,
		"-o", bin, "./cmd/musterctl")
	cmd.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building musterctl for %s/%s: %w", p.OS, p.Arch, err)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", bin, err)
	}
	path := filepath.Join(dist, archiveName(p))
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", path, err)
	}
	h := sha256.New()
	werr := writeArchive(io.MultiWriter(f, h), "musterctl", binary)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("writing %s: %w", path, werr)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// epoch is every archive entry's time, so that the archive depends on its content only.
var epoch = time.Unix(0, 0).UTC()

// writeArchive writes a gzipped tar holding one executable file, name, with content,
// the same bytes for the same input: fixed mode, owner and time, no gzip name or time.
func writeArchive(w io.Writer, name string, content []byte) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("starting gzip: %w", err)
	}
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(content)),
		ModTime: epoch, Uname: "root", Gname: "root", Format: tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the tar header: %w", err)
	}
	if _, err := tw.Write(content); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing the tar: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("closing gzip: %w", err)
	}
	return nil
}
