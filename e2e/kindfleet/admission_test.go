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
	certs    [][]byte
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
	if err != nil {
		p.refusals = append(p.refusals, fmt.Sprintf("%s %v", time.Now().Format(time.TimeOnly), err))
	}
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
	report := fmt.Sprintf("%d creates in %s, %d refused; %d serving certificates stored in turn (%d renewals)",
		p.creates, time.Since(p.started).Round(time.Second), len(p.refusals), len(p.certs), max(len(p.certs)-1, 0))
	var errs []error
	if len(p.refusals) > 0 {
		errs = append(errs, fmt.Errorf("the hub refused valid FleetJobs:\n  %s", strings.Join(p.refusals, "\n  ")))
	}
	if len(p.certs) < 3 {
		errs = append(errs, fmt.Errorf("%d renewals of a %s certificate, want at least 2", max(len(p.certs)-1, 0), webhookCertificateValidity))
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

// servedExpiries reads muster_webhook_certificate_expiry_seconds of every running hub pod.
func servedExpiries(ctx context.Context, hub *framework.Cluster) (map[string]time.Duration, error) {
	pods, err := hub.Clientset.CoreV1().Pods("muster-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=muster-hub"})
	if err != nil {
		return nil, err
	}
	served := map[string]time.Duration{}
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
			continue
		}
		families, err := framework.PodMetrics(ctx, hub, pod.Namespace, pod.Name, 8080)
		if err != nil {
			return nil, err
		}
		f := families["muster_webhook_certificate_expiry_seconds"]
		if f == nil || len(f.GetMetric()) == 0 {
			return nil, fmt.Errorf("hub pod %s exports no muster_webhook_certificate_expiry_seconds", pod.Name)
		}
		served[pod.Name] = time.Duration(f.GetMetric()[0].GetGauge().GetValue() * float64(time.Second))
	}
	if len(served) == 0 {
		return nil, errors.New("no hub pod runs")
	}
	return served, nil
}
