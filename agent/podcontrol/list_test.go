package podcontrol_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// takeAll adopts the orphans it allows, without writing: the kind's patch is its own.
type takeAll struct {
	refuse  string
	mu      sync.Mutex
	offered []string
}

func (a *takeAll) Adoptable(p *corev1.Pod) bool { return p.Name != a.refuse }

func (a *takeAll) Adopt(_ context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.offered = append(a.offered, p.Name)
	return p, nil
}

// TestListOffersOnlyMatchingOrphans: the owner's pods come back with the orphans its
// adopter takes; pods of another controller, orphans it refuses and pods outside the
// selector do not. An empty selector adopts nothing.
func TestListOffersOnlyMatchingOrphans(t *testing.T) {
	f := newFixture(t)
	other := f.pod("others", false)
	other.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "x", Controller: ptr.To(true)}}
	outside := f.pod("outside", false)
	outside.Labels = map[string]string{"app": "else"}
	f.create(f.pod("mine", true), f.pod("orphan", false), f.pod("refused", false), other, outside)
	selector := labels.SelectorFromSet(labels.Set{"app": "test"})

	adopter := &takeAll{refuse: "refused"}
	pods, err := f.control.List(t.Context(), f.owner, selector, adopter)
	if err != nil {
		t.Fatal(err)
	}
	got := names(pods)
	slices.Sort(got)
	if want := []string{"mine", "orphan"}; !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	if want := []string{"orphan"}; !slices.Equal(adopter.offered, want) {
		t.Errorf("offered %v for adoption, want %v", adopter.offered, want)
	}

	everything := &takeAll{}
	pods, err = f.control.List(t.Context(), f.owner, labels.Everything(), everything)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(pods); !slices.Equal(got, []string{"mine"}) || len(everything.offered) != 0 {
		t.Errorf("with an empty selector List = %v and offered %v, want [mine] and nothing", got, everything.offered)
	}

	if pods, err = f.control.List(t.Context(), f.owner, selector, nil); err != nil || !slices.Equal(names(pods), []string{"mine"}) {
		t.Errorf("without an adopter List = %v, %v; want [mine]", names(pods), err)
	}
}
