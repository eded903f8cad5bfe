//go:build e2e || badinputprobe

package badinput

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Where the templates of each kind sit, as the refusals name them.
const (
	fjJob      = "spec.template.spec."
	fjPod      = fjJob + "template.spec."
	bjPod      = "spec.template.spec."
	cronJobPod = "spec.jobTemplate.spec.template.spec.template.spec."
)

// rfc1123 is the start of the API server's message for a name that is not a DNS label.
const rfc1123 = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"

// The template cases are refused by the hub's webhook, which dry-runs the member's Job or
// PodTemplate and reports the API server's own messages on the user's fields.
// outcome from hub/webhook
func fleetJobCases() []refusedCase {
	return []refusedCase{
		{input: "parallelism -1", obj: fleetJob("par-neg", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptr.To[int32](-1) }),
			want: refusal{fjJob + "parallelism", "Invalid value: -1: must be greater than or equal to 0"}},
		{input: "completions -3", obj: fleetJob("comp-neg", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Completions = ptr.To[int32](-3) }),
			want: refusal{fjJob + "completions", "Invalid value: -3: must be greater than or equal to 0"}},
		{input: "backoffLimit -1", obj: fleetJob("backoff-neg", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.BackoffLimit = ptr.To[int32](-1) }),
			want: refusal{fjJob + "backoffLimit", "Invalid value: -1: must be greater than or equal to 0"}},
		{input: "activeDeadlineSeconds -5", obj: fleetJob("deadline-neg", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](-5) }),
			want: refusal{fjJob + "activeDeadlineSeconds", "Invalid value: -5: must be greater than or equal to 0"}},
		{input: "ttlSecondsAfterFinished -1", obj: fleetJob("ttl-neg", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) }),
			want: refusal{fjJob + "ttlSecondsAfterFinished", "Invalid value: -1: must be greater than or equal to 0"}},
		{input: "containers []", obj: fleetJob("no-containers", func(fj *musterv1.FleetJob) { jobPod(fj).Containers = []corev1.Container{} }),
			want: refusal{fjPod + "containers", "Required value"}},
		{input: "container name Bad_Name", obj: fleetJob("bad-container", func(fj *musterv1.FleetJob) { jobPod(fj).Containers[0].Name = "Bad_Name" }),
			want: refusal{fjPod + "containers[0].name", `Invalid value: "Bad_Name": ` + rfc1123}},
		{input: "container without image", obj: fleetJob("no-image", func(fj *musterv1.FleetJob) { jobPod(fj).Containers[0].Image = "" }),
			want: refusal{fjPod + "containers[0].image", "Required value"}},
		{input: "cpu request above its limit", obj: fleetJob("cpu", func(fj *musterv1.FleetJob) {
			jobPod(fj).Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		}), want: refusal{fjPod + "containers[0].resources.requests", "must be less than or equal to cpu limit"}},
		{input: "podFailurePolicy with restartPolicy OnFailure", obj: fleetJob("pfp-onfailure", func(fj *musterv1.FleetJob) {
			jobPod(fj).RestartPolicy = corev1.RestartPolicyOnFailure
			fj.Spec.Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
			}}}
		}), want: refusal{fjPod + "restartPolicy", `Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified`}},
		{input: "63-character name, Indexed, 10 completions", obj: fleetJob(repeat("a", 63), indexed(10)),
			want: refusal{"metadata.name", "will not able to create pod with invalid DNS label: " + repeat("a", 63) + "-9"}},
		{input: "Indexed parallelism 100001", obj: fleetJob("par-huge", indexed(200000), func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptr.To[int32](100001) }),
			want: refusal{fjJob + "parallelism", "Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed"}},
		{input: "backoffLimitPerIndex without Indexed", obj: fleetJob("per-index", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.BackoffLimitPerIndex = ptr.To[int32](1) }),
			want: refusal{fjJob + "backoffLimitPerIndex", "requires indexed completion mode"}},
		// The rules below are the CRD's own (OpenAPI and CEL): the API server applies them
		// before it calls the webhook.
		{input: "name of 64 characters", obj: fleetJob(repeat("n", 64)),
			want: refusal{"<nil>", "FleetJob name must be at most 63 characters"}},
		{input: "restartPolicy Always", obj: fleetJob("always", func(fj *musterv1.FleetJob) { jobPod(fj).RestartPolicy = corev1.RestartPolicyAlways }),
			want: refusal{"spec", "template.spec.template.spec.restartPolicy must be Never or OnFailure"}},
		{input: "Indexed without completions", obj: fleetJob("indexed-open", indexed(1), func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Completions = nil }),
			want: refusal{"spec", "an Indexed job needs template.spec.completions"}},
		{input: "managedBy another controller", obj: fleetJob("managed", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.ManagedBy = ptr.To("example.com/other") }),
			want: refusal{"spec", "template.spec.managedBy must be empty or muster.dev/agent"}},
		{input: "template {}", obj: emptyTemplate(fleetJob("empty-template")),
			want: refusal{"spec.template.spec", "Required value: the Job that each shard runs"}},
		{input: "placement mode Everywhere", obj: fleetJob("mode", func(fj *musterv1.FleetJob) { fj.Spec.Placement.Mode = "Everywhere" }),
			want: refusal{"spec.placement.mode", `Unsupported value: "Everywhere"`}},
		{input: "division with mode Single", obj: fleetJob("division", func(fj *musterv1.FleetJob) { fj.Spec.Placement.Division = &musterv1.Division{} }),
			want: refusal{"spec.placement", "division is only allowed with mode Divided"}},
		{input: "division weight 0", obj: fleetJob("weight", func(fj *musterv1.FleetJob) {
			fj.Spec.Placement.Mode = musterv1.PlacementDivided
			fj.Spec.Placement.Division = &musterv1.Division{Weights: []musterv1.ClusterWeight{{ClusterName: member1Name, Weight: 0}}}
		}), want: refusal{"spec.placement.division.weights[0].weight", "should be greater than or equal to 1"}},
		{input: "cluster name of 50 characters", obj: fleetJob("long-cluster", func(fj *musterv1.FleetJob) { fj.Spec.Placement.ClusterNames = []string{repeat("c", 50)} }),
			want: refusal{"spec.placement.clusterNames[0]", "Too long: may not be more than 49 bytes"}},
		{input: "shardFailurePolicy Sometimes", obj: fleetJob("sfp", func(fj *musterv1.FleetJob) { fj.Spec.ShardFailurePolicy = "Sometimes" }),
			want: refusal{"spec.shardFailurePolicy", `Unsupported value: "Sometimes"`}},
		{input: "placement mode changed to Duplicate", obj: fleetJob("mode-change"), change: func(o client.Object) {
			o.(*musterv1.FleetJob).Spec.Placement.Mode = musterv1.PlacementDuplicate
		}, want: refusal{"<nil>", "spec.placement.mode is immutable"}},
	}
}

// outcome from hub/webhook for the pod template cases.
func broadcastJobCases() []refusedCase {
	pod := func(j *musterv1.BroadcastJob) *corev1.PodSpec { return &j.Spec.Template.Spec }
	return []refusedCase{
		{input: "no containers", obj: broadcastJob("no-containers", func(j *musterv1.BroadcastJob) { pod(j).Containers = nil }),
			want: refusal{bjPod + "containers", "Required value"}},
		{input: "container name Bad_Name", obj: broadcastJob("bad-container", func(j *musterv1.BroadcastJob) { pod(j).Containers[0].Name = "Bad_Name" }),
			want: refusal{bjPod + "containers[0].name", `Invalid value: "Bad_Name": ` + rfc1123}},
		{input: "pod activeDeadlineSeconds -5", obj: broadcastJob("deadline", func(j *musterv1.BroadcastJob) { pod(j).ActiveDeadlineSeconds = ptr.To[int64](-5) }),
			want: refusal{bjPod + "activeDeadlineSeconds", "Invalid value: -5: must be between 1 and 2147483647, inclusive"}},
		{input: "two containers named main", obj: broadcastJob("dup-container", func(j *musterv1.BroadcastJob) { pod(j).Containers = append(pod(j).Containers, pod(j).Containers[0]) }),
			want: refusal{bjPod + "containers[1]", `Duplicate value: {"name":"main"}`}},
		{input: "volumeMount of a missing volume", obj: broadcastJob("mount", func(j *musterv1.BroadcastJob) {
			pod(j).Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}), want: refusal{bjPod + "containers[0].volumeMounts[0].name", `Not found: "data"`}},
		{input: "restartPolicy Always", obj: broadcastJob("always", func(j *musterv1.BroadcastJob) { pod(j).RestartPolicy = corev1.RestartPolicyAlways }),
			want: refusal{"spec", "template.spec.restartPolicy must be Never or OnFailure"}},
		{input: "parallelism 150%", obj: broadcastJob("par-pct", func(j *musterv1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("150%")) }),
			want: refusal{"spec.parallelism", "parallelism must be a non-negative integer or an integer percent from 0% to 100%"}},
		{input: "parallelism -1", obj: broadcastJob("par-neg", func(j *musterv1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromInt32(-1)) }),
			want: refusal{"spec.parallelism", "parallelism must be a non-negative integer or an integer percent from 0% to 100%"}},
		{input: "completionPolicy Never with a deadline", obj: broadcastJob("never-deadline", func(j *musterv1.BroadcastJob) {
			j.Spec.CompletionPolicy = musterv1.CompletionPolicy{Type: musterv1.CompletionNever, ActiveDeadlineSeconds: ptr.To[int64](60)}
		}), want: refusal{"spec.completionPolicy", "activeDeadlineSeconds and ttlSecondsAfterFinished are only allowed with completionPolicy type Always"}},
		{input: "failurePolicy Retry", obj: broadcastJob("retry", func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = "Retry" }),
			want: refusal{"spec.failurePolicy.type", `Unsupported value: "Retry"`}},
		{input: "restartLimit -1", obj: broadcastJob("restart-limit", func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.RestartLimit = -1 }),
			want: refusal{"spec.failurePolicy.restartLimit", "should be greater than or equal to 0"}},
		{input: "template presets label muster.dev/broadcastjob-uid", obj: broadcastJob("preset-label", func(j *musterv1.BroadcastJob) {
			j.Spec.Template.Labels = map[string]string{"app": "probe", musterv1.BroadcastJobUIDLabel: "someone-else"}
		}), want: refusal{"spec.template.metadata.labels", "Forbidden: muster.dev/controller, muster.dev/broadcastjob-name and muster.dev/broadcastjob-uid are set by Muster on the job's pods"}},
		{input: "template presets annotation muster.dev/restart-limit-exceeded", obj: broadcastJob("preset-annotation", func(j *musterv1.BroadcastJob) {
			j.Spec.Template.Annotations = map[string]string{musterv1.RestartLimitExceededAnnotation: "1"}
		}), want: refusal{"spec.template.metadata.annotations", "Forbidden: muster.dev/node and muster.dev/restart-limit-exceeded are set by Muster on the job's pods"}},
		{input: "template {}", obj: emptyTemplate(broadcastJob("empty-template")),
			want: refusal{"spec.template.spec", "Required value: the pod run on each node"}},
		{input: "name of 64 characters", obj: broadcastJob(repeat("n", 64)),
			want: refusal{"<nil>", "BroadcastJob name must be at most 63 characters"}},
	}
}

func fleetCronJobCases() []refusedCase {
	schedule := func(s string) func(*musterv1.FleetCronJob) {
		return func(cj *musterv1.FleetCronJob) { cj.Spec.Schedule = s }
	}
	zone := func(z string) func(*musterv1.FleetCronJob) {
		return func(cj *musterv1.FleetCronJob) { cj.Spec.TimeZone = ptr.To(z) }
	}
	return []refusedCase{
		// outcome from hub/cronjob: schedules that parse but never fire.
		{input: "schedule 0 0 30 2 * (February 30th)", obj: cronJob("feb30", schedule("0 0 30 2 *")),
			want: refusal{"spec.schedule", `schedule "0 0 30 2 *" never fires: no time matches it`}},
		{input: "schedule 59 23 31 2 * (February 31st)", obj: cronJob("feb31", schedule("59 23 31 2 *")),
			want: refusal{"spec.schedule", `schedule "59 23 31 2 *" never fires: no time matches it`}},
		{input: "timeZone Local", obj: cronJob("local", zone("Local")),
			want: refusal{"spec.timeZone", `time zone "Local" is not allowed`}},
		{input: "timeZone Mars/Olympus", obj: cronJob("mars", zone("Mars/Olympus")),
			want: refusal{"spec.timeZone", `unknown time zone "Mars/Olympus"`}},
		{input: "schedule @every 5m", obj: cronJob("every", schedule("@every 5m")),
			want: refusal{"spec.schedule", "@every is not supported"}},
		{input: "schedule 61 * * * *", obj: cronJob("minute61", schedule("61 * * * *")),
			want: refusal{"spec.schedule", `invalid schedule "61 * * * *"`}},
		{input: "schedule with TZ=", obj: cronJob("tz", schedule("TZ=UTC 0 * * * *")),
			want: refusal{"spec.schedule", "schedule must not set a time zone with TZ= or CRON_TZ=; use spec.timeZone"}},
		{input: "empty schedule", obj: cronJob("empty", schedule("")),
			want: refusal{"spec.schedule", "should be at least 1 chars long"}},
		{input: "name of 53 characters", obj: cronJob(repeat("n", 53)),
			want: refusal{"<nil>", "FleetCronJob name must be at most 52 characters"}},
		{input: "both templates", obj: cronJob("both", func(cj *musterv1.FleetCronJob) {
			cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: broadcastJob("child").Spec}
		}), want: refusal{"spec", "exactly one of jobTemplate and broadcastJobTemplate must be set"}},
		{input: "no template", obj: cronJob("neither", func(cj *musterv1.FleetCronJob) { cj.Spec.JobTemplate = nil }),
			want: refusal{"spec", "exactly one of jobTemplate and broadcastJobTemplate must be set"}},
		{input: "concurrencyPolicy Sometimes", obj: cronJob("concurrency", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = "Sometimes" }),
			want: refusal{"spec.concurrencyPolicy", `Unsupported value: "Sometimes"`}},
		{input: "successfulJobsHistoryLimit -1", obj: cronJob("history", func(cj *musterv1.FleetCronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) }),
			want: refusal{"spec.successfulJobsHistoryLimit", "should be greater than or equal to 0"}},
		{input: "startingDeadlineSeconds -1", obj: cronJob("deadline", func(cj *musterv1.FleetCronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) }),
			want: refusal{"spec.startingDeadlineSeconds", "should be greater than or equal to 0"}},
		// outcome from hub/webhook: children's templates dry-run as the members' objects.
		{input: "job template parallelism -1", obj: cronJob("child-par", func(cj *musterv1.FleetCronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.Parallelism = ptr.To[int32](-1)
		}), want: refusal{"spec.jobTemplate.spec.template.spec.parallelism", "Invalid value: -1: must be greater than or equal to 0"}},
		{input: "job template without containers", obj: cronJob("child-empty", func(cj *musterv1.FleetCronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.Template.Spec.Containers = []corev1.Container{}
		}), want: refusal{cronJobPod + "containers", "Required value"}},
		{input: "broadcast template container Bad_Name", obj: cronJob("child-name", broadcastChildren, func(cj *musterv1.FleetCronJob) {
			cj.Spec.BroadcastJobTemplate.Spec.Template.Spec.Containers[0].Name = "Bad_Name"
		}), want: refusal{"spec.broadcastJobTemplate.spec.template.spec.containers[0].name", `Invalid value: "Bad_Name": ` + rfc1123}},
		{input: "52-character name, Indexed children of 1000", obj: cronJob(repeat("c", 52), func(cj *musterv1.FleetCronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			cj.Spec.JobTemplate.Spec.Template.Spec.Completions = ptr.To[int32](1000)
		}), want: refusal{"metadata.name", "will not able to create pod with invalid DNS label: " + repeat("c", 52) + "-"}},
	}
}
