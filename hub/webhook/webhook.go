// Package webhook is the hub's validating admission webhook: it refuses what CEL cannot
// check: a FleetCronJob whose schedule or time zone does not parse, with the parser's
// message, and a WorkloadSpread that breaks the rules of api/workloadspread. The hub
// manages the serving certificate itself: a self-signed one kept in a Secret, so every
// replica serves the same certificate as the registration names.
package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/cronjob"
)

// Names of the webhook's objects.
const (
	ConfigurationName  = "muster-hub"
	SecretName         = "muster-hub-webhook-cert"
	ServiceName        = "muster-hub-webhook"
	fleetCronJobPath   = "/validate-muster-dev-v1alpha1-fleetcronjob"
	workloadSpreadPath = "/validate-muster-dev-v1alpha1-workloadspread"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;create;update
// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update,namespace=muster-system

// Endpoint says where the API server reaches the webhook: at https://URLHost:Port when
// URLHost is set (the hub running as a process), else through Service in Namespace.
type Endpoint struct {
	Port      int
	URLHost   string
	Namespace string
}

func (e Endpoint) hosts() (string, []net.IP, []string) {
	if e.URLHost != "" {
		if ip := net.ParseIP(e.URLHost); ip != nil {
			return e.URLHost, []net.IP{ip}, nil
		}
		return e.URLHost, nil, nil
	}
	svc := fmt.Sprintf("%s.%s.svc", ServiceName, e.Namespace)
	return svc, nil, []string{ServiceName, fmt.Sprintf("%s.%s", ServiceName, e.Namespace)}
}

// PrepareCertificate gets the shared serving certificate from its Secret, or makes it,
// and writes it as tls.crt and tls.key into dir for the webhook server. It returns the
// certificate's PEM, the CA bundle for the registration.
func PrepareCertificate(ctx context.Context, c client.Client, e Endpoint, dir string) ([]byte, error) {
	host, ips, dns := e.hosts()
	secret := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: SecretName}, secret)
	if apierrors.IsNotFound(err) || (err == nil && !covers(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey], host)) {
		crt, key, genErr := certutil.GenerateSelfSignedCertKey(host, ips, dns)
		if genErr != nil {
			return nil, fmt.Errorf("making the webhook's serving certificate: %w", genErr)
		}
		fresh := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: SecretName},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
		}
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, fresh)
		} else {
			secret.Data = fresh.Data
			err = c.Update(ctx, secret)
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			// Another replica got there first: use its certificate.
			return PrepareCertificate(ctx, c, e, dir)
		}
		if err != nil {
			return nil, fmt.Errorf("storing the webhook's serving certificate: %w", err)
		}
		secret = fresh
	} else if err != nil {
		return nil, fmt.Errorf("reading the webhook's serving certificate: %w", err)
	}
	for name, data := range map[string][]byte{corev1.TLSCertKey: secret.Data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: secret.Data[corev1.TLSPrivateKeyKey]} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return secret.Data[corev1.TLSCertKey], nil
}

// covers reports whether the stored certificate and key form a pair valid for host.
func covers(crt, key []byte, host string) bool {
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	certs, err := certutil.ParseCertsPEM(crt)
	if err != nil || len(certs) == 0 {
		return false
	}
	return certs[0].VerifyHostname(host) == nil
}

// Register adds the handlers to mgr's webhook server and writes the
// ValidatingWebhookConfiguration that sends FleetCronJobs and WorkloadSpreads to them.
// The WorkloadSpread handler reads the other spreads straight from the API server, so
// two spreads of one target created together cannot both pass on a stale cache.
func Register(ctx context.Context, mgr ctrl.Manager, c client.Client, e Endpoint, caBundle []byte) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &musterv1.FleetCronJob{}).WithValidator(fleetCronJobValidator{}).WithValidatorCustomPath(fleetCronJobPath).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &musterv1.WorkloadSpread{}).WithValidator(workloadSpreadValidator{reader: mgr.GetAPIReader()}).WithValidatorCustomPath(workloadSpreadPath).Complete(); err != nil {
		return err
	}
	want := []admissionregistrationv1.ValidatingWebhook{
		validatingWebhook("fleetcronjobs.muster.dev", "fleetcronjobs", fleetCronJobPath, e, caBundle),
		validatingWebhook("workloadspreads.muster.dev", "workloadspreads", workloadSpreadPath, e, caBundle),
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: ConfigurationName}, cfg)
	if apierrors.IsNotFound(err) {
		cfg = &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName}, Webhooks: want}
		return client.IgnoreAlreadyExists(c.Create(ctx, cfg))
	}
	if err != nil {
		return fmt.Errorf("reading the webhook configuration: %w", err)
	}
	if sameEndpoints(cfg.Webhooks, want) {
		return nil
	}
	cfg.Webhooks = want
	if err := c.Update(ctx, cfg); err != nil {
		return fmt.Errorf("updating the webhook configuration: %w", err)
	}
	return nil
}

func validatingWebhook(name, resource, path string, e Endpoint, caBundle []byte) admissionregistrationv1.ValidatingWebhook {
	clientConfig := admissionregistrationv1.WebhookClientConfig{CABundle: caBundle}
	if e.URLHost != "" {
		clientConfig.URL = ptr.To(fmt.Sprintf("https://%s%s", net.JoinHostPort(e.URLHost, fmt.Sprint(e.Port)), path))
	} else {
		clientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: e.Namespace, Name: ServiceName, Path: ptr.To(path), Port: ptr.To(int32(443))}
	}
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            clientConfig,
		AdmissionReviewVersions: []string{"v1"},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		TimeoutSeconds:          ptr.To[int32](5),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{musterv1.GroupVersion.Group}, APIVersions: []string{musterv1.GroupVersion.Version}, Resources: []string{resource},
			},
		}},
	}
}

// sameEndpoints says whether the registered webhooks already call the wanted ones, with
// the same CA: then there is nothing to write (the API server fills in defaults, so the
// objects themselves never compare equal).
func sameEndpoints(have, want []admissionregistrationv1.ValidatingWebhook) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		h, w := have[i].ClientConfig, want[i].ClientConfig
		if have[i].Name != want[i].Name || !bytes.Equal(h.CABundle, w.CABundle) || ptr.Deref(h.URL, "") != ptr.Deref(w.URL, "") ||
			(h.Service == nil) != (w.Service == nil) || (h.Service != nil && ptr.Deref(h.Service.Path, "") != ptr.Deref(w.Service.Path, "")) {
			return false
		}
	}
	return true
}

// fleetCronJobValidator refuses schedules and time zones the controller cannot run.
type fleetCronJobValidator struct{}

func (fleetCronJobValidator) ValidateCreate(_ context.Context, cj *musterv1.FleetCronJob) (admission.Warnings, error) {
	return nil, validate(cj)
}

func (fleetCronJobValidator) ValidateUpdate(_ context.Context, _, cj *musterv1.FleetCronJob) (admission.Warnings, error) {
	return nil, validate(cj)
}

func (fleetCronJobValidator) ValidateDelete(context.Context, *musterv1.FleetCronJob) (admission.Warnings, error) {
	return nil, nil
}

func validate(cj *musterv1.FleetCronJob) error {
	_, err := cronjob.Parse(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	var bad *cronjob.InvalidError
	if !errors.As(err, &bad) {
		return err
	}
	value := cj.Spec.Schedule
	if bad.Field == "timeZone" {
		value = ptr.Deref(cj.Spec.TimeZone, "")
	}
	return apierrors.NewInvalid(musterv1.GroupVersion.WithKind("FleetCronJob").GroupKind(), cj.Name,
		field.ErrorList{field.Invalid(field.NewPath("spec", bad.Field), value, bad.Err.Error())})
}

// workloadSpreadValidator refuses WorkloadSpreads that break the rules CEL cannot express
// (percent sums, a target another spread has, patches that do not apply).
type workloadSpreadValidator struct {
	reader client.Reader
}

func (v workloadSpreadValidator) ValidateCreate(ctx context.Context, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, v.validate(ctx, ws)
}

func (v workloadSpreadValidator) ValidateUpdate(ctx context.Context, _, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, v.validate(ctx, ws)
}

func (workloadSpreadValidator) ValidateDelete(context.Context, *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, nil
}

func (v workloadSpreadValidator) validate(ctx context.Context, ws *musterv1.WorkloadSpread) error {
	var others musterv1.WorkloadSpreadList
	if err := v.reader.List(ctx, &others, client.InNamespace(ws.Namespace)); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing WorkloadSpreads: %w", err))
	}
	if errs := workloadspread.Validate(ws, others.Items); len(errs) > 0 {
		return apierrors.NewInvalid(musterv1.GroupVersion.WithKind("WorkloadSpread").GroupKind(), ws.Name, errs)
	}
	return nil
}
