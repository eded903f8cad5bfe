//go:build e2ekind

package kindfleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub/webhook"
)

// webhookCertificateValidity is how long the hub's webhook certificates last in this
// fleet: short, so that the leader renews them several times during the suite (every 90 s,
// when a quarter remains) while a client keeps writing.
const webhookCertificateValidity = 2 * time.Minute

// admissionProbe creates a valid FleetJob (a dry run, through both webhooks) every 200 ms
// from the install to the end of the suite, across certificate renewals and the tests that
// kill the leading hub pod, and records every refusal and each serving certificate the
// hub's Secret held.
type admissionProbe struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	started  time.Time
	creates  int
	refusals []string
	// others are failures that did not come from the hub's webhooks (the API server
	// throttling or timing out on a loaded two-core machine): reported, not failed on.
	others []string
	certs  [][]byte
}

func startAdmissionProbe(hub *framework.Cluster, cluster string) *admissionProbe {
	ctx, cancel := context.WithCancel(context.Background())
	p := &admissionProbe{cancel: cancel, done: make(chan struct{}), started: time.Now()}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := hub.Client.Create(ctx, framework.AdmissionProbe(cluster), client.DryRunAll)
			if ctx.Err() != nil {
				return
			}
			p.record(err)
			if i%10 == 0 {
				p.observeCertificate(ctx, hub)
			}
		}
	}()
	return p
}

func (p *admissionProbe) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.creates++
	if err == nil {
		return
	}
	line := fmt.Sprintf("%s %v", time.Now().Format(time.TimeOnly), err)
	if fromWebhook(err) {
		p.refusals = append(p.refusals, line)
	} else {
		p.others = append(p.others, line)
	}
}

// fromWebhook says whether a failed create is the hub's webhooks' doing: a call that did
// not reach them or that they answered wrongly (the API server says which webhook), or a
// refusal of the valid object.
func fromWebhook(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "webhook") || strings.Contains(msg, "x509") || strings.Contains(msg, "tls:") || apierrors.IsInvalid(err) || apierrors.IsForbidden(err)
}

// observeCertificate records the Secret's certificate when it is a new one.
func (p *admissionProbe) observeCertificate(ctx context.Context, hub *framework.Cluster) {
	var secret corev1.Secret
	if err := hub.Client.Get(ctx, client.ObjectKey{Namespace: "muster-system", Name: webhook.SecretName}, &secret); err != nil {
		return
	}
	crt := secret.Data[corev1.TLSCertKey]
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.certs) == 0 || !bytes.Equal(p.certs[len(p.certs)-1], crt) {
		p.certs = append(p.certs, crt)
	}
}

// stop ends the probe and reports what it saw; an error says what a user would have seen
// go wrong: a refused write, no renewal, or a replica serving an expired certificate.
func (p *admissionProbe) stop(ctx context.Context, hub *framework.Cluster) (string, error) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	ran := time.Since(p.started)
	report := fmt.Sprintf("%d creates in %s, %d refused by the webhooks, %d failed otherwise; %d serving certificates stored in turn (%d renewals)",
		p.creates, ran.Round(time.Second), len(p.refusals), len(p.others), len(p.certs), max(len(p.certs)-1, 0))
	if len(p.others) > 0 {
		report += "; failed otherwise:\n  " + strings.Join(p.others, "\n  ")
	}
	var errs []error
	if len(p.refusals) > 0 {
		errs = append(errs, fmt.Errorf("the hub refused valid FleetJobs:\n  %s", strings.Join(p.refusals, "\n  ")))
	}
	// A renewal is due every three quarters of a validity: a run of the whole suite sees
	// several; a run of a few tests may see none.
	if ran > 3*webhookCertificateValidity && len(p.certs) < 3 {
		errs = append(errs, fmt.Errorf("%d renewals of a %s certificate in %s, want at least 2", max(len(p.certs)-1, 0), webhookCertificateValidity, ran.Round(time.Second)))
	}
	served, err := servedExpiries(ctx, hub)
	if err != nil {
		errs = append(errs, err)
	}
	for pod, expiry := range served {
		report += fmt.Sprintf("; %s serves a certificate valid %s more", pod, expiry.Round(time.Second))
		if expiry <= 0 {
			errs = append(errs, fmt.Errorf("hub pod %s serves a certificate that expired %s ago", pod, -expiry))
		}
	}
	if len(p.certs) > 0 {
		if certs, err := certutil.ParseCertsPEM(p.certs[len(p.certs)-1]); err == nil {
			report += fmt.Sprintf("; the stored one is valid until %s", certs[0].NotAfter.Format(time.TimeOnly))
		}
	}
	return report, errors.Join(errs...)
}

// servedExpiries reads muster_webhook_certificate_expiry_seconds of every ready hub pod,
// trying for half a minute (a pod just started, a pod proxy call that failed).
func servedExpiries(ctx context.Context, hub *framework.Cluster) (map[string]time.Duration, error) {
	var served map[string]time.Duration
	err := framework.Until(ctx, 30*time.Second, "every ready hub pod's served certificate", func(ctx context.Context) (bool, string, error) {
		pods, err := hub.Clientset.CoreV1().Pods("muster-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=muster-hub"})
		if err != nil {
			return false, err.Error(), nil
		}
		served = map[string]time.Duration{}
		for _, pod := range pods.Items {
			if !podReady(pod) || pod.DeletionTimestamp != nil {
				continue
			}
			families, err := framework.PodMetrics(ctx, hub, pod.Namespace, pod.Name, 8080)
			if err != nil {
				return false, err.Error(), nil
			}
			f := families["muster_webhook_certificate_expiry_seconds"]
			if f == nil || len(f.GetMetric()) == 0 {
				return false, "hub pod " + pod.Name + " exports no muster_webhook_certificate_expiry_seconds", nil
			}
			served[pod.Name] = time.Duration(f.GetMetric()[0].GetGauge().GetValue() * float64(time.Second))
		}
		return len(served) > 0, "no hub pod is ready", nil
	})
	return served, err
}
