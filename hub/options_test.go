package hub_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/musterhq/muster/hub"
)

// parse returns the options that the muster-hub command line args gives, as main does.
func parse(t *testing.T, args ...string) (*hub.Options, error) {
	t.Helper()
	opts := hub.NewOptions()
	fs := pflag.NewFlagSet("muster-hub", pflag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	opts.AddFlags(fs)
	return opts, fs.Parse(args)
}

// TestDefaultsAreTheDocumentedOnes: a hub started without flags runs with the defaults the
// README and the flags' help promise, and those pass validation.
func TestDefaultsAreTheDocumentedOnes(t *testing.T) {
	opts, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	want := &hub.Options{
		MetricsAddr:                 ":8080",
		ProbeAddr:                   ":8081",
		LeaderElect:                 true,
		LeaderElectionNamespace:     "muster-system",
		ClusterGracePeriod:          40 * time.Second,
		MaxAgentCertificateLifetime: 24 * time.Hour,
		WebhookPort:                 9443,
		// cert-controller's default lifetime of a serving certificate.
		WebhookCertificateValidity: 365 * 24 * time.Hour,
		CronJobWorkers:             50,
		FleetJobWorkers:            5,
		BroadcastJobWorkers:        5,
		KubeAPIQPS:                 200,
		KubeAPIBurst:               400,
		SpreadUnschedulableWindow:  5 * time.Minute,
		DefaultPodSecurityLevel:    "baseline",
		// As kube-apiserver's --default-unreachable-toleration-seconds and the node
		// lifecycle controller's --unhealthy-zone-threshold.
		DefaultUnreachableTolerationSeconds: 300,
		EvictionRate:                        1,
		UnhealthyClusterThreshold:           0.55,
		// Twice a pod's default terminationGracePeriodSeconds.
		FencingMargin: time.Minute,
		// Five times a member of a thousand nodes: ten NodeSlices.
		MaxNodesPerMember: 5000,
	}
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", opts, want)
	}
	if err := opts.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestFlagsSetTheirOptions: each flag lands in the option it documents.
func TestFlagsSetTheirOptions(t *testing.T) {
	for _, c := range []struct {
		arg   string
		check func(*hub.Options) bool
	}{
		{"--kubeconfig=/etc/hub.kubeconfig", func(o *hub.Options) bool { return o.Kubeconfig == "/etc/hub.kubeconfig" }},
		{"--metrics-bind-address=0", func(o *hub.Options) bool { return o.MetricsAddr == "0" }},
		{"--health-probe-bind-address=:9000", func(o *hub.Options) bool { return o.ProbeAddr == ":9000" }},
		{"--pprof-bind-address=127.0.0.1:6060", func(o *hub.Options) bool { return o.PprofAddr == "127.0.0.1:6060" }},
		{"--leader-elect=false", func(o *hub.Options) bool { return !o.LeaderElect }},
		{"--leader-election-namespace=ops", func(o *hub.Options) bool { return o.LeaderElectionNamespace == "ops" }},
		{"--cluster-grace-period=2m", func(o *hub.Options) bool { return o.ClusterGracePeriod == 2*time.Minute }},
		{"--webhook-port=0", func(o *hub.Options) bool { return o.WebhookPort == 0 }},
		{"--webhook-host=hub.example.com", func(o *hub.Options) bool { return o.WebhookHost == "hub.example.com" }},
		{"--webhook-cert-validity=720h", func(o *hub.Options) bool { return o.WebhookCertificateValidity == 720*time.Hour }},
		{"--concurrent-fleetcronjob-syncs=7", func(o *hub.Options) bool { return o.CronJobWorkers == 7 }},
		{"--concurrent-fleetjob-syncs=8", func(o *hub.Options) bool { return o.FleetJobWorkers == 8 }},
		{"--concurrent-broadcastjob-syncs=9", func(o *hub.Options) bool { return o.BroadcastJobWorkers == 9 }},
		{"--kube-api-qps=12.5", func(o *hub.Options) bool { return o.KubeAPIQPS == 12.5 }},
		{"--kube-api-burst=30", func(o *hub.Options) bool { return o.KubeAPIBurst == 30 }},
		{"--spread-unschedulable-window=30s", func(o *hub.Options) bool { return o.SpreadUnschedulableWindow == 30*time.Second }},
		{"--default-pod-security-level=restricted", func(o *hub.Options) bool { return o.DefaultPodSecurityLevel == "restricted" }},
		{"--reserved-namespaces=prod,team-*", func(o *hub.Options) bool {
			return reflect.DeepEqual(o.ReservedNamespaces, []string{"prod", "team-*"})
		}},
		{"--auto-accept-clusters", func(o *hub.Options) bool { return o.AutoAcceptClusters }},
		{"--max-agent-certificate-lifetime=1h", func(o *hub.Options) bool { return o.MaxAgentCertificateLifetime == time.Hour }},
		{"--default-unreachable-toleration-seconds=60", func(o *hub.Options) bool { return o.DefaultUnreachableTolerationSeconds == 60 }},
		{"--eviction-rate=0.1", func(o *hub.Options) bool { return o.EvictionRate == 0.1 }},
		{"--fencing-margin=90s", func(o *hub.Options) bool { return o.FencingMargin == 90*time.Second }},
		{"--unhealthy-cluster-threshold=0.7", func(o *hub.Options) bool { return o.UnhealthyClusterThreshold == 0.7 }},
	} {
		opts, err := parse(t, c.arg)
		if err != nil {
			t.Errorf("%s: %v", c.arg, err)
			continue
		}
		if !c.check(opts) {
			t.Errorf("%s: options %+v", c.arg, opts)
		}
	}
}

// TestMalformedFlagValuesAreRefused: a value of the wrong type stops the command line
// before the hub starts, naming the flag.
func TestMalformedFlagValuesAreRefused(t *testing.T) {
	for _, arg := range []string{
		"--cluster-grace-period=40", "--webhook-port=https", "--kube-api-qps=fast",
		"--leader-elect=maybe", "--max-agent-certificate-lifetime=1d", "--no-such-flag",
	} {
		if _, err := parse(t, arg); err == nil {
			t.Errorf("%s: accepted", arg)
		} else if name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "="); !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the flag", arg, err)
		}
	}
}

// TestValidateRefusesFlagsTheHubCannotRunWith: each refusal names its flag, and every
// refused flag is reported at once.
func TestValidateRefusesFlagsTheHubCannotRunWith(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // substrings of the error; none: valid
	}{
		{args: []string{"--default-pod-security-level=strict"}, want: []string{"--default-pod-security-level", `"strict"`}},
		{args: []string{"--default-pod-security-level="}},
		{args: []string{"--default-pod-security-level=privileged"}},
		{args: []string{"--max-agent-certificate-lifetime=5m"}, want: []string{"--max-agent-certificate-lifetime 5m0s", "at least 10m0s"}},
		{args: []string{"--max-agent-certificate-lifetime=10m"}},
		{args: []string{"--max-agent-certificate-lifetime=0"}, want: []string{"--max-agent-certificate-lifetime 0s"}},
		{args: []string{"--cluster-grace-period=0"}, want: []string{"--cluster-grace-period 0s", "unreachable"}},
		{args: []string{"--cluster-grace-period=-1s"}, want: []string{"--cluster-grace-period -1s"}},
		{args: []string{"--cluster-grace-period=1ms"}},
		{args: []string{"--webhook-port=-1"}, want: []string{"--webhook-port -1"}},
		{args: []string{"--webhook-port=65536"}, want: []string{"--webhook-port 65536"}},
		{args: []string{"--webhook-port=65535"}},
		{args: []string{"--default-unreachable-toleration-seconds=-1"}, want: []string{"--default-unreachable-toleration-seconds -1"}},
		{args: []string{"--default-unreachable-toleration-seconds=0"}},
		{args: []string{"--eviction-rate=0"}, want: []string{"--eviction-rate 0", "no work ever moves"}},
		{args: []string{"--fencing-margin=0s"}, want: []string{"--fencing-margin 0s", "must be positive"}},
		{args: []string{"--unhealthy-cluster-threshold=0"}, want: []string{"--unhealthy-cluster-threshold 0"}},
		{args: []string{"--unhealthy-cluster-threshold=1.5"}, want: []string{"--unhealthy-cluster-threshold 1.5"}},
		{args: []string{"--unhealthy-cluster-threshold=1"}},
		{args: []string{"--webhook-port=0"}},
		{args: []string{"--webhook-host=10.0.0.5"}, want: []string{"--webhook-host", "10.0.0.5", "DNS name"}},
		{args: []string{"--webhook-host=::1"}, want: []string{"--webhook-host", "DNS name"}},
		{args: []string{"--webhook-host=localhost"}},
		{args: []string{"--webhook-cert-validity=30s"}, want: []string{"--webhook-cert-validity 30s", "at least 1m0s"}},
		{args: []string{"--webhook-cert-validity=1m"}},
		{args: []string{"--webhook-cert-validity=43800h"}},
		{args: []string{"--webhook-cert-validity=350400h"}, want: []string{"--webhook-cert-validity 350400h0m0s", "at most 43800h0m0s"}},
		{args: []string{"--concurrent-fleetjob-syncs=0"}, want: []string{"--concurrent-fleetjob-syncs 0", "at least 1"}},
		{args: []string{"--concurrent-broadcastjob-syncs=-2"}, want: []string{"--concurrent-broadcastjob-syncs -2"}},
		{args: []string{"--concurrent-fleetcronjob-syncs=0"}, want: []string{"--concurrent-fleetcronjob-syncs 0"}},
		{args: []string{"--concurrent-fleetjob-syncs=1"}},
		{
			args: []string{"--cluster-grace-period=0", "--webhook-port=70000", "--default-pod-security-level=x"},
			want: []string{"--cluster-grace-period", "--webhook-port", "--default-pod-security-level"},
		},
	} {
		opts, err := parse(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		err = opts.Validate()
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%v: refused: %v", c.args, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v: accepted", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", c.args, err, w)
			}
		}
	}
}

// TestRunRefusesInvalidFlagsBeforeConnecting: an invalid flag stops Run at once, even
// with a kubeconfig whose server does not answer.
func TestRunRefusesInvalidFlagsBeforeConnecting(t *testing.T) {
	opts := hub.NewOptions()
	opts.Kubeconfig = writeKubeconfig(t, "https://127.0.0.1:1")
	opts.ClusterGracePeriod = 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hub.Run(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "--cluster-grace-period") {
		t.Fatalf("Run: %v, want the --cluster-grace-period refusal", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run waited for the context instead of refusing at once")
	}
}

// TestRunReportsAMissingKubeconfig: a --kubeconfig that names no file fails Run with the
// file's name.
func TestRunReportsAMissingKubeconfig(t *testing.T) {
	opts := hub.NewOptions()
	opts.Kubeconfig = filepath.Join(t.TempDir(), "absent.kubeconfig")
	err := hub.Run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "absent.kubeconfig") {
		t.Fatalf("Run: %v, want an error naming the missing kubeconfig", err)
	}
}

// writeKubeconfig writes a kubeconfig for server, with no credentials, and returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const format = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(strings.Replace(format, "%q", `"`+server+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
