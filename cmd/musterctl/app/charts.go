package app

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/musterhq/muster/deploy/charts"
)

// musterctl installs what the Helm charts hold (deploy/charts), rendered by Helm's engine
// with values taken from its flags, so that `helm install` and musterctl install the same
// objects. It applies them in three steps where Helm applies them at once: the CRDs first
// (waiting until they serve), then everything but the workload, then the workload (and,
// for the agent, its bootstrap Secret just before it).
const (
	crdTemplates       = "templates/crds/"
	deploymentTemplate = "templates/deployment.yaml"
	bootstrapTemplate  = "templates/bootstrap.yaml"
)

// imageValues are the charts' image values for an image reference: repository and tag, or
// repository and digest. A reference without either gets tag latest, as a container
// runtime reads it.
func imageValues(ref string) map[string]any {
	if repository, digest, ok := strings.Cut(ref, "@"); ok {
		return map[string]any{"repository": repository, "digest": digest}
	}
	// A colon after the last slash ends the repository; one before it is a registry's port.
	if colon := strings.LastIndex(ref, ":"); colon > strings.LastIndex(ref, "/") {
		return map[string]any{"repository": ref[:colon], "tag": ref[colon+1:]}
	}
	return map[string]any{"repository": ref, "tag": "latest"}
}

// hubInstall is what musterctl sets of the muster-hub chart's values; a zero field keeps
// the chart's default.
type hubInstall struct {
	image string
	// args are the hub's extra flags (init --hub-arg).
	args []string
	// replicas, for an upgrade, are the running Deployment's (kubectl scale, an
	// autoscaler): an upgrade changes the version, not the size, nor whether a disruption
	// budget guards it.
	replicas int32
}

// hubChart renders the muster-hub chart for h.
func hubChart(h hubInstall) (charts.Objects, error) {
	values := map[string]any{"extraArgs": anySlice(h.args)}
	if h.image != "" {
		values["image"] = imageValues(h.image)
	}
	if h.replicas > 0 {
		values["replicas"] = h.replicas
	}
	return charts.Render(charts.Hub, values)
}

// agentJoin is what a join line gives the muster-agent chart; the zero value renders the
// agent without a bootstrap Secret, what an upgrade or an unjoin needs.
type agentJoin struct {
	hubURL, ca, caHash, token, clusterName string
	// executorRoles are the member's ClusterRoles bound to the Work executor beyond its
	// defaults.
	executorRoles []string
}

// agentChart renders the muster-agent chart with image (the chart's default when empty)
// and the join line j.
func agentChart(image string, j agentJoin) (charts.Objects, error) {
	values := map[string]any{
		"clusterName": j.clusterName,
		"hub":         map[string]any{"url": j.hubURL, "ca": j.ca, "caHash": j.caHash},
		// join applies the Secret once, and the agent deletes it once used.
		"bootstrap":         map[string]any{"token": j.token, "keepSecret": false},
		"workExecutorRoles": anySlice(j.executorRoles),
	}
	if image != "" {
		values["image"] = imageValues(image)
	}
	return charts.Render(charts.Agent, values)
}

// crdsOf returns the objects of the CRD templates.
func crdsOf(objs charts.Objects) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasPrefix(o.Template, crdTemplates) {
			out = append(out, o.Unstructured)
		}
	}
	return out
}

// withoutCRDs returns the objects of every template but the CRDs'.
func withoutCRDs(objs charts.Objects) charts.Objects {
	var out charts.Objects
	for _, o := range objs {
		if !strings.HasPrefix(o.Template, crdTemplates) {
			out = append(out, o)
		}
	}
	return out
}

// applyOrder puts objs in the order musterctl applies them: the CRDs, everything else
// but the last templates, then the objects of last in the order given.
func applyOrder(objs charts.Objects, last ...string) []*unstructured.Unstructured {
	out := crdsOf(objs)
	out = append(out, withoutCRDs(objs).Except(last...).Unstructured()...)
	for _, t := range last {
		out = append(out, objs.From(t).Unstructured()...)
	}
	return out
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
