// Package nodeimage builds, on a machine that can pull nothing, a kind node image for the
// Kubernetes version the tests run: a Debian rootfs from debootstrap with systemd,
// containerd and runc; kubelet, kubeadm, kubectl, crictl and the CNI plugins built from the
// Go module proxy (package toolchain); and the control-plane images kubeadm deploys
// (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd, CoreDNS,
// pause) preloaded into containerd, each a FROM-scratch image around a binary built here
// (kube-proxy on the Debian rootfs, for the iptables it runs).
//
// kind's own `kind build node-image` cannot be used here: whatever its inputs, it pulls the
// images every node needs (kindnetd, local-path-provisioner, pause, etcd, CoreDNS) from
// their registries. So the image is assembled here with the Docker CLI, the way kind's
// builder does it: a staging container from the rootfs, the binaries and node files copied
// in, the images imported into its containerd, and the result committed.
//
// Images are built once per input: the tag carries a digest of everything that goes in,
// and an image already in the engine under that tag is used as it is.
package nodeimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/musterhq/muster/e2e/engine"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

// ImageEnv names a node image to use instead of building one: a user with a registry sets
// it to one of kind's published images (kindest/node:v1.36.3).
const ImageEnv = "MUSTER_KIND_NODE_IMAGE"

// Repository is where the images built here are tagged; nothing is ever pushed.
const Repository = "muster.local/kind-node"

// Image versions kubeadm v1.36 expects to find; the node never pulls.
const (
	pauseImage   = "registry.k8s.io/pause:3.10.2"
	etcdImage    = "registry.k8s.io/etcd:3.6.8-0"
	corednsImage = "registry.k8s.io/coredns/coredns:" + toolchain.CoreDNSVersion
)

// debianSuite and debianPackages make the node's rootfs: what systemd, containerd and a
// kubelet with iptables-based kube-proxy need, and nothing for documentation or apt.
const debianSuite = "bookworm"

var debianPackages = []string{
	"systemd", "systemd-sysv", "dbus", "containerd", "runc", "iptables", "nftables",
	"iproute2", "ca-certificates", "util-linux", "mount", "kmod", "conntrack", "ethtool",
	"socat", "procps", "libseccomp2", "ebtables",
}

//go:embed all:files
var nodeFiles embed.FS

// Ensure returns the node image to create kind clusters from: $MUSTER_KIND_NODE_IMAGE when
// set, else the image built here for the current inputs, building it first if the engine
// does not have it.
func Ensure(ctx context.Context, cacheDir string, log io.Writer) (string, error) {
	if image := os.Getenv(ImageEnv); image != "" {
		return image, nil
	}
	// Two runs on one machine (two clones, say) build one image, not two half images.
	lockDir := filepath.Join(cacheDir, "nodeimage")
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := toolchain.LockDir(lockDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	// The rootfs first: debootstrap waits on the network and the disk, so on a cold machine
	// it runs while another process still holds the toolchain's lock for its compiles.
	rootfsImage, err := ensureRootfs(ctx, cacheDir, log)
	if err != nil {
		return "", err
	}
	bins, err := toolchain.EnsureNode(ctx, cacheDir, log)
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "muster-nodeimage-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	pause := filepath.Join(work, "pause")
	if err := goBuild(ctx, pause, "github.com/musterhq/muster/e2e/cmd/pause"); err != nil {
		return "", err
	}
	images := componentImages(bins, pause, rootfsImage)
	rootfsID, err := imageID(ctx, rootfsImage)
	if err != nil {
		return "", err
	}
	key, err := inputKey(rootfsID, images, bins)
	if err != nil {
		return "", err
	}
	tag := fmt.Sprintf("%s:%s-%s", Repository, toolchain.KubernetesVersion, key)
	if exists(ctx, tag) {
		fmt.Fprintf(log, "nodeimage: %s is built\n", tag)
		return tag, nil
	}
	start := time.Now()
	fmt.Fprintf(log, "nodeimage: building %s\n", tag)
	if err := build(ctx, work, tag, rootfsImage, images, bins, log); err != nil {
		return "", fmt.Errorf("building node image %s: %w", tag, err)
	}
	fmt.Fprintf(log, "nodeimage: built %s in %s\n", tag, time.Since(start).Round(time.Second))
	removeOlderImages(ctx, tag, log)
	return tag, nil
}

// componentImage is one image preloaded into the node: a binary at a path, run as the
// entrypoint, on an empty base or on the node's rootfs. ref is the name kubeadm deploys;
// in the host's engine the image is built under buildRef instead, so that a developer's
// own registry.k8s.io images are never retagged, and renamed inside the node.
type componentImage struct {
	ref, binary, path, base string
}

func (c componentImage) buildRef() string { return "muster.local/preload/" + c.ref }

func (c componentImage) dockerfile() string {
	return fmt.Sprintf("FROM %s\nCOPY binary %s\nENTRYPOINT [%q]\n", c.base, c.path, c.path)
}

func componentImages(bins *toolchain.NodeBinaries, pause, rootfsImage string) []componentImage {
	k8s := func(name string) componentImage {
		return componentImage{
			ref:    "registry.k8s.io/" + name + ":" + toolchain.KubernetesVersion,
			binary: bins.Path(name), path: "/usr/local/bin/" + name, base: "scratch",
		}
	}
	proxy := k8s(toolchain.KubeProxy)
	proxy.base = rootfsImage // kube-proxy runs iptables and conntrack
	return []componentImage{
		k8s(toolchain.KubeAPIServer), k8s(toolchain.KubeControllerManager), k8s(toolchain.KubeScheduler), proxy,
		{ref: etcdImage, binary: bins.Path(toolchain.Etcd), path: "/usr/local/bin/etcd", base: "scratch"},
		{ref: corednsImage, binary: bins.Path(toolchain.CoreDNS), path: "/coredns", base: "scratch"},
		{ref: pauseImage, binary: pause, path: "/pause", base: "scratch"},
	}
}

// nodeBinaries are copied into the node's file system: kubelet and friends in /usr/bin,
// the CNI plugins in /opt/cni/bin.
func nodeBinaries(bins *toolchain.NodeBinaries) map[string]string {
	m := map[string]string{
		"/usr/bin/kubelet":      bins.Path(toolchain.Kubelet),
		"/usr/bin/kubeadm":      bins.Path(toolchain.Kubeadm),
		"/usr/bin/kubectl":      bins.Path(toolchain.Kubectl),
		"/usr/local/bin/crictl": bins.Path(toolchain.Crictl),
	}
	for _, p := range toolchain.CNIPlugins {
		m["/opt/cni/bin/"+p] = bins.Path(p)
	}
	return m
}

// inputKey digests everything the node image is made of: the rootfs image's ID, each
// binary's place and content, the node files, and the text of every Dockerfile and commit
// change; a change to any of it gives a new tag, so a stale image is never reused. Source
// paths are not part of it: the same inputs in another cache give the same key.
func inputKey(rootfsID string, images []componentImage, bins *toolchain.NodeBinaries) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, "format 2", toolchain.KubernetesVersion, rootfsID, stageDockerfile("rootfs"), strings.Join(commitChanges, " "))
	type input struct{ name, src string }
	var inputs []input
	for _, img := range images {
		inputs = append(inputs, input{img.ref + " " + img.dockerfile(), img.binary})
	}
	for dst, src := range nodeBinaries(bins) {
		inputs = append(inputs, input{dst, src})
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].name < inputs[j].name })
	for _, in := range inputs {
		fmt.Fprintln(h, in.name)
		if err := hashFile(h, in.src); err != nil {
			return "", err
		}
	}
	err := walkNodeFiles(func(path string, raw []byte) error {
		fmt.Fprintln(h, path, len(raw))
		h.Write(raw)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// walkNodeFiles calls fn with each embedded node file, by its path in the node.
func walkNodeFiles(fn func(path string, raw []byte) error) error {
	return fs.WalkDir(nodeFiles, "files", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := nodeFiles.ReadFile(path)
		if err != nil {
			return err
		}
		return fn(strings.TrimPrefix(path, "files/"), raw)
	})
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// build assembles the node image in work and tags it.
func build(ctx context.Context, work, tag, rootfsImage string, images []componentImage, bins *toolchain.NodeBinaries, log io.Writer) error {
	var refs []string
	for _, img := range images {
		if err := buildComponentImage(ctx, filepath.Join(work, "img-"+filepath.Base(img.path)), img); err != nil {
			return err
		}
		refs = append(refs, img.buildRef())
	}
	// The node holds them; the engine need not.
	defer func() { _ = docker(context.Background(), nil, append([]string{"rmi"}, refs...)...) }()
	archive := filepath.Join(work, "images.tar")
	if err := docker(ctx, nil, append([]string{"save", "-o", archive}, refs...)...); err != nil {
		return err
	}

	stage := tag + "-stage"
	if err := buildStageImage(ctx, filepath.Join(work, "stage"), stage, rootfsImage, bins); err != nil {
		return err
	}
	defer func() { _ = docker(context.Background(), nil, "rmi", stage) }()

	// containerd runs in the staging container only to import the images; the node's own
	// containerd finds them in /var/lib/containerd when the node boots.
	container := "muster-nodeimage-" + strings.ReplaceAll(tag[strings.LastIndex(tag, ":")+1:], ".", "-")
	_ = docker(ctx, nil, "rm", "-f", container)
	if err := docker(ctx, nil, "run", "-d", "--privileged", "--name", container, "--entrypoint", "/usr/bin/containerd", stage); err != nil {
		return err
	}
	defer func() { _ = docker(context.Background(), nil, "rm", "-f", container) }()
	if err := waitExec(ctx, container, "ctr", "version"); err != nil {
		return fmt.Errorf("containerd in the staging container: %w", err)
	}
	if err := docker(ctx, nil, "cp", archive, container+":/images.tar"); err != nil {
		return err
	}
	if err := docker(ctx, log, "exec", container, "ctr", "--namespace", "k8s.io", "images", "import", "/images.tar"); err != nil {
		return err
	}
	for _, img := range images {
		ctr := []string{"exec", container, "ctr", "--namespace", "k8s.io", "images"}
		if err := docker(ctx, nil, append(ctr, "tag", img.buildRef(), img.ref)...); err != nil {
			return err
		}
		if err := docker(ctx, nil, append(ctr, "rm", img.buildRef())...); err != nil {
			return err
		}
	}
	if err := docker(ctx, nil, "exec", container, "rm", "/images.tar"); err != nil {
		return err
	}
	// containerd as PID 1 ignores the image's stop signal (systemd's); TERM lets it close
	// its database cleanly before the commit.
	if err := docker(ctx, nil, "kill", "--signal", "TERM", container); err != nil {
		return err
	}
	if err := docker(ctx, nil, "wait", container); err != nil {
		return err
	}
	return docker(ctx, nil, append(append([]string{"commit"}, commitChanges...), container, tag)...)
}

// commitChanges turn the staging container back into a node: systemd, behind the entrypoint.
var commitChanges = []string{
	"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
	"--change", `CMD []`,
}

func buildComponentImage(ctx context.Context, dir string, img componentImage) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := copyFile(img.binary, filepath.Join(dir, "binary"), 0o755); err != nil {
		return err
	}
	return dockerBuild(ctx, dir, img.dockerfile(), img.buildRef())
}

// buildStageImage layers the node's binaries and files on the rootfs.
func buildStageImage(ctx context.Context, dir, tag, rootfsImage string, bins *toolchain.NodeBinaries) error {
	ctxDir := filepath.Join(dir, "root")
	for dst, src := range nodeBinaries(bins) {
		if err := copyFile(src, filepath.Join(ctxDir, dst), 0o755); err != nil {
			return err
		}
	}
	err := walkNodeFiles(func(path string, raw []byte) error {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(path, "usr/local/bin/") {
			mode = 0o755
		}
		dst := filepath.Join(ctxDir, path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, raw, mode)
	})
	if err != nil {
		return err
	}
	// kind reads the Kubernetes version of a node image from /kind/version.
	if err := os.MkdirAll(filepath.Join(ctxDir, "kind"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "kind", "version"), []byte(toolchain.KubernetesVersion+"\n"), 0o644); err != nil {
		return err
	}
	return dockerBuild(ctx, dir, stageDockerfile(rootfsImage), tag)
}

// stageDockerfile layers the node's files (copied into the context's root/) on the rootfs.
func stageDockerfile(rootfsImage string) string {
	return strings.Join([]string{
		"FROM " + rootfsImage,
		"COPY root/ /",
		// The kubelet and containerd start at boot; units a container has no use for are
		// masked, as kind's base image does, so that systemd reaches multi-user quickly.
		"RUN systemctl enable kubelet.service containerd.service" +
			" && systemctl mask getty.target systemd-logind.service systemd-udevd.service systemd-udev-trigger.service" +
			" systemd-remount-fs.service systemd-update-utmp.service systemd-random-seed.service e2scrub_reap.service",
		// systemd reads this to know it runs in a container.
		"ENV container=docker",
		"STOPSIGNAL SIGRTMIN+3",
		`ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
	}, "\n") + "\n"
}

func dockerBuild(ctx context.Context, dir, dockerfile, tag string) error {
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return err
	}
	return docker(ctx, nil, "build", "--quiet", "--tag", tag, dir)
}

// ensureRootfs returns the Debian rootfs image, importing it from the cached tarball, and
// the tarball from debootstrap, when missing. The tarball's digest is recorded beside it,
// so a truncated one is rebuilt.
func ensureRootfs(ctx context.Context, cacheDir string, log io.Writer) (string, error) {
	key := sha256.Sum256([]byte(debianSuite + " " + strings.Join(debianPackages, ",")))
	name := "node-rootfs-" + debianSuite + "-" + hex.EncodeToString(key[:])[:12]
	tag := "muster.local/node-rootfs:" + strings.TrimPrefix(name, "node-rootfs-")
	if exists(ctx, tag) {
		return tag, nil
	}
	tarball := filepath.Join(cacheDir, name+".tar")
	if err := verifyDigest(tarball); err != nil {
		fmt.Fprintf(log, "nodeimage: building the Debian rootfs (%v)\n", err)
		start := time.Now()
		if err := debootstrap(ctx, tarball, log); err != nil {
			return "", err
		}
		fmt.Fprintf(log, "nodeimage: built the Debian rootfs in %s\n", time.Since(start).Round(time.Second))
	}
	if err := docker(ctx, nil, "import", tarball, tag); err != nil {
		return "", err
	}
	return tag, nil
}

func debootstrap(ctx context.Context, tarball string, log io.Writer) error {
	if err := engine.AptInstall(ctx, log, map[string]string{"debootstrap": "debootstrap"}); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(tarball), "rootfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := []string{"--variant=minbase", "--include=" + strings.Join(debianPackages, ","), debianSuite, dir, "http://deb.debian.org/debian"}
	if err := run(ctx, log, "debootstrap", args...); err != nil {
		return err
	}
	// What only apt and readers of documentation use.
	for _, p := range []string{"var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale"} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			return err
		}
	}
	partial := tarball + ".partial"
	if err := run(ctx, log, "tar", "--numeric-owner", "-C", dir, "-cf", partial, "."); err != nil {
		return err
	}
	if err := writeDigest(partial, tarball); err != nil {
		return err
	}
	return os.Rename(partial, tarball)
}

func verifyDigest(path string) error {
	want, err := os.ReadFile(path + ".sha256")
	if err != nil {
		return err
	}
	got, err := toolchain.FileDigest(path)
	if err != nil {
		return err
	}
	if got != strings.TrimSpace(string(want)) {
		return fmt.Errorf("%s has digest %s, recorded %s", path, got, want)
	}
	return nil
}

func writeDigest(path, final string) error {
	sum, err := toolchain.FileDigest(path)
	if err != nil {
		return err
	}
	return os.WriteFile(final+".sha256", []byte(sum+"\n"), 0o644)
}

func copyFile(src, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func goBuild(ctx context.Context, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if raw, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, raw)
	}
	return nil
}

// removeOlderImages untags the node images built before current: each holds about 2 GB,
// and nothing refers to them once the inputs have changed. Failing to is only logged.
func removeOlderImages(ctx context.Context, current string, log io.Writer) {
	out, err := exec.CommandContext(ctx, "docker", "images", "--format", "{{.Repository}}:{{.Tag}}", Repository).Output()
	if err != nil {
		fmt.Fprintf(log, "nodeimage: listing older node images: %v\n", err)
		return
	}
	for _, ref := range strings.Fields(string(out)) {
		if ref == current {
			continue
		}
		if err := docker(ctx, nil, "rmi", ref); err != nil {
			fmt.Fprintf(log, "nodeimage: removing %s: %v\n", ref, err)
		}
	}
}

func imageID(ctx context.Context, image string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).Output()
	if err != nil {
		return "", fmt.Errorf("docker image inspect %s: %w", image, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func exists(ctx context.Context, image string) bool {
	return exec.CommandContext(ctx, "docker", "image", "inspect", image).Run() == nil
}

// waitExec runs a command in a container until it succeeds, for up to 30 seconds.
func waitExec(ctx context.Context, container string, args ...string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := docker(ctx, nil, append([]string{"exec", container}, args...)...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// docker runs the Docker CLI; its output goes to log when given, and is part of the error
// otherwise.
func docker(ctx context.Context, log io.Writer, args ...string) error {
	return run(ctx, log, "docker", args...)
}

func run(ctx context.Context, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	} else {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
