package app

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/liggitt/tabwriter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	kubectldescribe "k8s.io/kubectl/pkg/describe"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// printDescription writes describe's text, in kubectl describe's layout: aligned
// "Field:  value" lines, indented sections, events last.
func printDescription(out io.Writer, obj client.Object, in *describeInput) error {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	w := kubectldescribe.NewPrefixWriter(tw)
	w.Write(kubectldescribe.LEVEL_0, "Name:\t%s\n", obj.GetName())
	if obj.GetNamespace() != "" {
		w.Write(kubectldescribe.LEVEL_0, "Namespace:\t%s\n", obj.GetNamespace())
	}
	w.Write(kubectldescribe.LEVEL_0, "Kind:\t%s\n", kindOf(obj))
	w.Write(kubectldescribe.LEVEL_0, "Labels:\t%s\n", orNone(labels.FormatLabels(obj.GetLabels())))
	created := obj.GetCreationTimestamp()
	w.Write(kubectldescribe.LEVEL_0, "Created:\t%s (%s ago)\n", created.UTC().Format(time.RFC3339), age(in.now, created))
	var err error
	switch o := obj.(type) {
	case *musterv1.FleetJob:
		describeFleetJob(w, o, in)
	case *musterv1.BroadcastJob:
		describeBroadcastJob(w, o, in)
	default:
		err = describeGeneric(w, obj, in)
	}
	if err != nil {
		return err
	}
	kubectldescribe.DescribeEvents(&in.events, w)
	return tw.Flush()
}

// describeGeneric shows the spec and status of a kind without per-cluster shards, the
// status's conditions as a table.
func describeGeneric(w kubectldescribe.PrefixWriter, obj client.Object, in *describeInput) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	for _, section := range []string{"spec", "status"} {
		v, ok := u[section].(map[string]any)
		if !ok {
			continue
		}
		conds, _ := v["conditions"].([]any)
		delete(v, "conditions")
		if len(v) > 0 {
			raw, err := yaml.Marshal(v)
			if err != nil {
				return err
			}
			w.Write(kubectldescribe.LEVEL_0, "%s:\n", strings.ToUpper(section[:1])+section[1:])
			for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
				w.Write(kubectldescribe.LEVEL_1, "%s\n", line)
			}
		}
		if section == "status" && conds != nil {
			var typed []metav1.Condition
			raw, _ := json.Marshal(conds)
			if err := json.Unmarshal(raw, &typed); err != nil {
				return err
			}
			describeConditions(w, kubectldescribe.LEVEL_0, "Conditions", typed, in.now)
		}
	}
	// Some kinds (NodeSlice) keep their data at the top level.
	for _, k := range []string{"clusterName"} {
		if v, ok := u[k]; ok {
			w.Write(kubectldescribe.LEVEL_0, "%s:\t%v\n", k, v)
		}
	}
	return nil
}

// describeConditions writes a titled conditions table at level.
func describeConditions(w kubectldescribe.PrefixWriter, level int, title string, conds []metav1.Condition, now time.Time) {
	if len(conds) == 0 {
		w.Write(level, "%s:\t<none>\n", title)
		return
	}
	w.Write(level, "%s:\n", title)
	w.Write(level+1, "Type\tStatus\tReason\tAge\tMessage\n")
	w.Write(level+1, "----\t------\t------\t---\t-------\n")
	for _, c := range conds {
		w.Write(level+1, "%s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orDash(c.Reason), age(now, c.LastTransitionTime), orDash(c.Message))
	}
}

// workDetail writes what a shard's Work says: its Applied and Available conditions and,
// for a manifest the member refused, the member API server's message.
func workDetail(w kubectldescribe.PrefixWriter, work *musterv1.Work, now time.Time) {
	w.Write(kubectldescribe.LEVEL_2, "Work:\t%s/%s\n", work.Namespace, work.Name)
	for _, t := range []string{musterv1.WorkApplied, musterv1.WorkAvailable} {
		w.Write(kubectldescribe.LEVEL_2, "%s:\t%s\n", t, conditionSummary(work.Status.Conditions, t, now))
	}
	for _, m := range work.Status.Manifests {
		for _, c := range m.Conditions {
			if c.Type == musterv1.WorkApplied && c.Status == metav1.ConditionFalse {
				w.Write(kubectldescribe.LEVEL_2, "Refused by the member:\t%s %s: %s\n", m.Resource.Kind, m.Resource.Name, c.Message)
			}
		}
	}
}

// conditionSummary is "True (Reason, 5m ago): message" for the condition of type t, or
// "not reported" when the agent has not set it.
func conditionSummary(conds []metav1.Condition, t string, now time.Time) string {
	for _, c := range conds {
		if c.Type != t {
			continue
		}
		s := fmt.Sprintf("%s (%s, %s ago)", c.Status, orDash(c.Reason), age(now, c.LastTransitionTime))
		if c.Message != "" {
			s += ": " + c.Message
		}
		return s
	}
	return "not reported yet"
}

// worksByCluster indexes Works by their shard's cluster (and subset, "subset@cluster").
func worksByCluster(works []musterv1.Work) (map[string]*musterv1.Work, []string) {
	out := map[string]*musterv1.Work{}
	for i := range works {
		l := works[i].Labels
		key := l[musterv1.ClusterNameLabel]
		if s := l[musterv1.SubsetLabel]; s != "" {
			key = s + "@" + key
		}
		if p := l[musterv1.PartLabel]; p != "" {
			key += " (part " + p + ")"
		}
		out[key] = &works[i]
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return out, keys
}

func kindOf(obj client.Object) string {
	t := fmt.Sprintf("%T", obj)
	return t[strings.LastIndex(t, ".")+1:]
}

func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func orNone(s string) string {
	if s == "" || s == "<none>" {
		return "<none>"
	}
	return s
}
