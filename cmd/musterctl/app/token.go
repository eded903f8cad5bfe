package app

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/musterhq/muster/internal/bootstrap"
)

func newTokenCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	token := &cobra.Command{Use: "token", Short: "Manage bootstrap tokens"}
	token.AddCommand(newTokenCreateCommand(flags), newTokenListCommand(flags), newTokenDeleteCommand(flags))
	return token
}

func newTokenCreateCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	ttl := bootstrap.DefaultTokenTTL
	cluster := ""
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token on the hub and print the join command",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A token bound to a name no MemberCluster can have, or already expired, would
			// print a join command that can only fail.
			if cluster != "" {
				if err := checkClusterName("--cluster", cluster); err != nil {
					return err
				}
			}
			if ttl <= 0 {
				return fmt.Errorf("--ttl %s: a token must live for some time", ttl)
			}
			hub, err := newClients(flags)
			if err != nil {
				return err
			}
			join, err := issueToken(cmd.Context(), hub, ttl, cluster)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), join)
			return nil
		},
	}
	create.Flags().DurationVar(&ttl, "ttl", ttl, "lifetime of the token")
	create.Flags().StringVar(&cluster, "cluster", "", "bind the token to this cluster name: it can register and ask for no other identity")
	return create
}

func newTokenListCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the hub's bootstrap tokens (ids only: a secret is shown once, at creation)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := newClients(flags)
			if err != nil {
				return err
			}
			secrets, err := hub.clientset.CoreV1().Secrets(metav1.NamespaceSystem).List(cmd.Context(), metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String(),
			})
			if err != nil {
				return fmt.Errorf("listing bootstrap tokens: %w", err)
			}
			return printTokens(cmd.OutOrStdout(), secrets.Items, time.Now())
		},
	}
}

// printTokens prints the tokens as a table, soonest to expire first.
func printTokens(out io.Writer, secrets []corev1.Secret, now time.Time) error {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "ID", Type: "string"},
		{Name: "Expires", Type: "string"},
		{Name: "Cluster", Type: "string", Description: "the only cluster the token may join, or <any>"},
		{Name: "Usages", Type: "string"},
		{Name: "Description", Type: "string"},
	}}
	sort.Slice(secrets, func(i, j int) bool {
		return string(secrets[i].Data[bootstrapapi.BootstrapTokenExpirationKey]) < string(secrets[j].Data[bootstrapapi.BootstrapTokenExpirationKey])
	})
	for i := range secrets {
		s := &secrets[i]
		d := func(k string) string { return string(s.Data[k]) }
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{d(bootstrapapi.BootstrapTokenIDKey), expiry(d(bootstrapapi.BootstrapTokenExpirationKey), now), tokenCluster(d(bootstrapapi.BootstrapTokenExtraGroupsKey)), tokenUsages(s), orDash(d(bootstrapapi.BootstrapTokenDescriptionKey))},
			Object: runtime.RawExtension{Object: s},
		})
	}
	if len(table.Rows) == 0 {
		fmt.Fprintln(out, "No bootstrap tokens.")
		return nil
	}
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(table, out)
}

// expiry is "2026-11-23T21:00:00Z (in 45m)", "… (expired)" or "never".
func expiry(rfc3339 string, now time.Time) string {
	if rfc3339 == "" {
		return "never"
	}
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		return rfc3339 + " (unreadable)"
	}
	if !t.After(now) {
		return rfc3339 + " (expired)"
	}
	return fmt.Sprintf("%s (in %s)", rfc3339, duration.HumanDuration(t.Sub(now)))
}

// tokenCluster reads the cluster a token is bound to from its extra groups.
func tokenCluster(groups string) string {
	prefix := bootstrap.ClusterGroup("")
	for _, g := range strings.Split(groups, ",") {
		if c, ok := strings.CutPrefix(g, prefix); ok {
			return c
		}
	}
	return "<any>"
}

func tokenUsages(s *corev1.Secret) string {
	var usages []string
	for _, u := range bootstrapapi.KnownTokenUsages {
		if string(s.Data[bootstrapapi.BootstrapTokenUsagePrefix+u]) == "true" {
			usages = append(usages, u)
		}
	}
	return orDash(strings.Join(usages, ","))
}

var tokenIDPattern = regexp.MustCompile(`^` + bootstrapapi.BootstrapTokenIDPattern + `$`)

func newTokenDeleteCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID [ID ...]",
		Short: "Delete bootstrap tokens: joins with them fail from now on",
		Long:  "Deletes bootstrap tokens by id (the part before the dot; a whole token is accepted too).",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, err := newClients(flags)
			if err != nil {
				return err
			}
			for _, arg := range args {
				if err := deleteToken(cmd.Context(), hub, arg); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "bootstrap token %q deleted\n", tokenID(arg))
			}
			return nil
		},
	}
}

// tokenID is the id of a token id or of a whole token.
func tokenID(arg string) string {
	id, _, _ := strings.Cut(arg, ".")
	return id
}

func deleteToken(ctx context.Context, hub *clients, arg string) error {
	id := tokenID(arg)
	if !tokenIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a bootstrap token id: want 6 lowercase letters or digits", arg)
	}
	err := hub.clientset.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, bootstraputil.BootstrapTokenSecretName(id), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("bootstrap token %q not found", id)
	}
	if err != nil {
		return fmt.Errorf("deleting bootstrap token %q: %w", id, err)
	}
	return nil
}
