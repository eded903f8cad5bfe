package agent_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/musterhq/muster/agent"
	"github.com/musterhq/muster/agent/broadcastjob"
)

// parse returns the options that the muster-agent command line args gives, as main does.
func parse(t *testing.T, args ...string) (*agent.Options, error) {
	t.Helper()
	opts := agent.NewOptions()
	fs := pflag.NewFlagSet("muster-agent", pflag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	opts.AddFlags(fs)
	return opts, fs.Parse(args)
}

// TestDefaultsAreTheDocumentedOnes: an agent started without flags runs with the defaults
// the flags' help and the README promise, and those pass validation.
func TestDefaultsAreTheDocumentedOnes(t *testing.T) {
	opts, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	want := &agent.Options{
		Namespace:               "muster-agent",
		MetricsAddr:             ":8080",
		ProbeAddr:               ":8081",
		ProfilerAddr:            "0",
		LeaderElect:             true,
		HeartbeatInterval:       10 * time.Second,
		CertLifetime:            24 * time.Hour,
		KubeAPIQPS:              200,
		KubeAPIBurst:            400,
		WorkWorkers:             8,
		WorkExecutor:            "muster-agent/muster-work-executor",
		JobWorkers:              4,
		BroadcastJobBinding:     broadcastjob.BindingAuto,
		JobBatchPeriod:          time.Second,
		JobBatchQuiet:           100 * time.Millisecond,
		BroadcastJobBatchPeriod: 200 * time.Millisecond,
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
		check func(*agent.Options) bool
	}{
		{"--kubeconfig=/etc/member", func(o *agent.Options) bool { return o.Kubeconfig == "/etc/member" }},
		{"--namespace=ops", func(o *agent.Options) bool { return o.Namespace == "ops" }},
		{"--metrics-bind-address=0", func(o *agent.Options) bool { return o.MetricsAddr == "0" }},
		{"--health-probe-bind-address=:9000", func(o *agent.Options) bool { return o.ProbeAddr == ":9000" }},
		{"--profiler-bind-address=localhost:6060", func(o *agent.Options) bool { return o.ProfilerAddr == "localhost:6060" }},
		{"--leader-elect=false", func(o *agent.Options) bool { return !o.LeaderElect }},
		{"--heartbeat-interval=3s", func(o *agent.Options) bool { return o.HeartbeatInterval == 3*time.Second }},
		{"--cert-lifetime=2h", func(o *agent.Options) bool { return o.CertLifetime == 2*time.Hour }},
		{"--kube-api-qps=50", func(o *agent.Options) bool { return o.KubeAPIQPS == 50 }},
		{"--kube-api-burst=60", func(o *agent.Options) bool { return o.KubeAPIBurst == 60 }},
		{"--work-workers=16", func(o *agent.Options) bool { return o.WorkWorkers == 16 }},
		{"--work-executor=apps/deployer", func(o *agent.Options) bool { return o.WorkExecutor == "apps/deployer" }},
		{"--broadcastjob-binding=scheduler", func(o *agent.Options) bool { return o.BroadcastJobBinding == broadcastjob.BindingScheduler }},
		{"--job-workers=2", func(o *agent.Options) bool { return o.JobWorkers == 2 }},
		{"--job-batch-period=500ms", func(o *agent.Options) bool { return o.JobBatchPeriod == 500*time.Millisecond }},
		{"--job-batch-quiet=0", func(o *agent.Options) bool { return o.JobBatchQuiet == 0 }},
		{"--broadcastjob-batch-period=1s", func(o *agent.Options) bool { return o.BroadcastJobBatchPeriod == time.Second }},
		{"--broadcastjob-batch-quiet=50ms", func(o *agent.Options) bool { return o.BroadcastJobBatchQuiet == 50*time.Millisecond }},
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

// TestMalformedFlagValuesAreRefused: a value of the wrong type, or a binding the agent
// does not know, stops the command line, naming the flag.
func TestMalformedFlagValuesAreRefused(t *testing.T) {
	for _, arg := range []string{
		"--broadcastjob-binding=direct", "--heartbeat-interval=10", "--cert-lifetime=1d",
		"--work-workers=many", "--leader-elect=sometimes",
	} {
		if _, err := parse(t, arg); err == nil {
			t.Errorf("%s: accepted", arg)
		} else if name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "="); !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the flag", arg, err)
		}
	}
}

// TestValidateRefusesFlagsTheAgentCannotRunWith: each refusal names its flag, and every
// refused flag is reported at once.
func TestValidateRefusesFlagsTheAgentCannotRunWith(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // substrings of the error; none: valid
	}{
		{args: []string{"--cert-lifetime=9m59s"}, want: []string{"--cert-lifetime 9m59s", "at least 10m0s"}},
		{args: []string{"--cert-lifetime=10m"}},
		{args: []string{"--cert-lifetime=0"}, want: []string{"--cert-lifetime 0s"}},
		{args: []string{"--heartbeat-interval=0"}, want: []string{"--heartbeat-interval 0s", "at least 1s"}},
		{args: []string{"--heartbeat-interval=500ms"}, want: []string{"--heartbeat-interval 500ms"}},
		{args: []string{"--heartbeat-interval=1s"}},
		{args: []string{"--work-executor=executor"}, want: []string{"--work-executor", "NAMESPACE/NAME"}},
		{args: []string{"--work-executor=Bad_NS/x"}, want: []string{"--work-executor", "namespace"}},
		{args: []string{"--work-executor=ns/"}, want: []string{"--work-executor", "name"}},
		{
			args: []string{"--cert-lifetime=1m", "--heartbeat-interval=0", "--work-executor=x"},
			want: []string{"--cert-lifetime", "--heartbeat-interval", "--work-executor"},
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

// TestRunRefusesInvalidFlagsBeforeRegistering: an invalid flag stops Run at once, before
// it reads the member or asks the hub for a certificate it could not get.
func TestRunRefusesInvalidFlagsBeforeRegistering(t *testing.T) {
	opts := agent.NewOptions()
	opts.Kubeconfig = filepath.Join(t.TempDir(), "absent")
	opts.CertLifetime = 5 * time.Minute
	err := agent.Run(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "--cert-lifetime") {
		t.Fatalf("Run: %v, want the --cert-lifetime refusal", err)
	}
}

// TestRunReportsAMissingKubeconfig: with valid flags, a --kubeconfig that names no file
// fails Run with the file's name.
func TestRunReportsAMissingKubeconfig(t *testing.T) {
	opts := agent.NewOptions()
	opts.Kubeconfig = filepath.Join(t.TempDir(), "absent.kubeconfig")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := agent.Run(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "absent.kubeconfig") {
		t.Fatalf("Run: %v, want an error naming the missing kubeconfig", err)
	}
}
