package v1alpha1_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestDiscovery: the names kubectl and musterctl resolve (README, "Kinds"): each kind's
// scope, short names, the muster category behind `get muster`, and a status endpoint for
// the kinds controllers report on.
func TestDiscovery(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion(musterv1.GroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		served[r.Name] = r
	}
	cases := []struct {
		resource, kind string
		namespaced     bool
		shortNames     []string
		status         bool
	}{
		{"memberclusters", "MemberCluster", false, []string{"mc", "mcs"}, true},
		{"nodeslices", "NodeSlice", true, []string{"nsl"}, false},
		{"works", "Work", true, nil, true},
		{"fleetjobs", "FleetJob", true, []string{"fj"}, true},
		{"broadcastjobs", "BroadcastJob", true, []string{"bcj"}, true},
		{"fleetcronjobs", "FleetCronJob", true, []string{"fcj"}, true},
		{"workloadspreads", "WorkloadSpread", true, []string{"wrs"}, true},
	}
	var resources []string
	for _, tc := range cases {
		resources = append(resources, tc.resource)
		r, ok := served[tc.resource]
		if !ok {
			t.Errorf("%s is not served", tc.resource)
			continue
		}
		if r.Kind != tc.kind || r.Namespaced != tc.namespaced || !slices.Equal(r.ShortNames, tc.shortNames) || !slices.Equal(r.Categories, []string{"muster"}) {
			t.Errorf("%s: kind %s, namespaced %v, short names %v, categories %v; want %s, %v, %v, [muster]",
				tc.resource, r.Kind, r.Namespaced, r.ShortNames, r.Categories, tc.kind, tc.namespaced, tc.shortNames)
		}
		if _, ok := served[tc.resource+"/status"]; ok != tc.status {
			t.Errorf("%s/status served = %v, want %v", tc.resource, ok, tc.status)
		}
	}
	for name := range served {
		if !slices.Contains(resources, strings.TrimSuffix(name, "/status")) {
			t.Errorf("%s is served but not in this test: add its names", name)
		}
	}
}

// TestEveryClusterNameHasAMemberNamespace: the longest name a MemberCluster may have
// still makes a namespace for its Works, and one character more would not; so the
// cluster name's limit is as long as it can be.
func TestEveryClusterNameHasAMemberNamespace(t *testing.T) {
	ctx := t.Context()
	longest := strings.Repeat("m", 49)
	if got := musterv1.MemberNamespace(longest); got != "muster-member-"+longest || len(validation.IsDNS1123Label(got)) > 0 {
		t.Fatalf("MemberNamespace(%q) = %q, want a DNS label muster-member-<name>", longest, got)
	}
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: longest}}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatalf("a cluster name of 49 characters was refused: %v", err)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(mc.Name)}}); err != nil {
		t.Fatalf("the member namespace of the longest cluster name was refused: %v", err)
	}
	tooLong := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(longest + "m")}}
	if err := env.Client.Create(ctx, tooLong); !apierrors.IsInvalid(err) {
		t.Fatalf("the namespace of a 50-character cluster name: error = %v, want Invalid (else the limit could be longer)", err)
	}
}
