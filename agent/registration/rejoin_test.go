package registration

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

// hubAnswering is a hub whose API server answers the agent's reads of MemberCluster c1
// with statuses in turn, the last one from then on (a MemberCluster for 200, a Status
// otherwise).
func hubAnswering(t *testing.T, statuses ...int) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		status := statuses[0]
		if len(statuses) > 1 {
			statuses = statuses[1:]
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		body := any(map[string]any{"apiVersion": "muster.dev/v1alpha1", "kind": "MemberCluster", "metadata": map[string]any{"name": "c1"}})
		if status != http.StatusOK {
			st := apierrors.NewGenericServerResponse(status, r.Method, schema.GroupResource{Group: "muster.dev", Resource: "memberclusters"}, "c1", "", 0, false).Status()
			st.Kind, st.APIVersion = "Status", "v1"
			body = st
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// An agent restarted with a usable certificate and a new join line joins again only when
// the hub keeps refusing the certificate (a deny revoked its join); it drops a join line it
// does not need, and keeps one whose need it cannot tell yet.
func TestRejoinWanted(t *testing.T) {
	cases := []struct {
		name          string
		hub           []int // none: unreachable
		wantRejoin    bool
		wantBootstrap bool
	}{
		{name: "the hub accepts the certificate", hub: []int{http.StatusOK}},
		{name: "the deny revoked the certificate's join", hub: []int{http.StatusForbidden}, wantRejoin: true, wantBootstrap: true},
		{name: "the hub does not know the certificate", hub: []int{http.StatusUnauthorized}, wantRejoin: true, wantBootstrap: true},
		{name: "the cluster was unjoined", hub: []int{http.StatusNotFound}, wantRejoin: true, wantBootstrap: true},
		// A kube-apiserver denies requests until its RBAC caches are filled after a start.
		{name: "a hub that has just started refuses once", hub: []int{http.StatusForbidden, http.StatusOK}},
		{name: "a refusal, then the hub fails", hub: []int{http.StatusForbidden, http.StatusInternalServerError}, wantBootstrap: true},
		{name: "the hub fails", hub: []int{http.StatusInternalServerError}, wantBootstrap: true},
		{name: "the hub is unreachable", wantBootstrap: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			stored := credentialsFor(t, newKey(t), now.Add(-time.Minute), now.Add(time.Hour))
			stored.HubURL = "https://127.0.0.1:1"
			if len(tc.hub) > 0 {
				srv := hubAnswering(t, tc.hub...)
				stored.HubURL, stored.CA = srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			}
			cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: BootstrapSecret}})
			r := &Registrar{Store: &Store{Client: cs, Namespace: testNamespace}, RefusalSettle: 10 * time.Millisecond, Now: time.Now}
			// The fake client does not check the delete's precondition.
			rejoin, why := r.rejoinWanted(t.Context(), stored, &Bootstrap{}, nil)
			if rejoin != tc.wantRejoin {
				t.Errorf("rejoinWanted() = %v (%s), want %v", rejoin, why, tc.wantRejoin)
			}
			_, err := cs.CoreV1().Secrets(testNamespace).Get(t.Context(), BootstrapSecret, metav1.GetOptions{})
			if kept := err == nil; kept != tc.wantBootstrap {
				t.Errorf("bootstrap Secret kept = %v (%v), want %v", kept, err, tc.wantBootstrap)
			}
		})
	}
}
