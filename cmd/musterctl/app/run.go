package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// pluginPrefix is how kubectl finds plugins on PATH: `kubectl muster` runs kubectl-muster.
const pluginPrefix = "kubectl-"

// Run runs musterctl, invoked as program with args, and returns its exit code: 0 on
// success, 1 on any error, which is printed to errOut as kubectl prints its own.
func Run(program string, args []string, out, errOut io.Writer) int {
	return RunContext(context.Background(), program, args, out, errOut)
}

// RunContext is Run until ctx ends (a watch stops then).
func RunContext(ctx context.Context, program string, args []string, out, errOut io.Writer) int {
	root := NewRootCommand(out, errOut)
	if strings.HasPrefix(program, pluginPrefix) {
		// Help and usage lines then read as the user typed them.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl " + strings.TrimPrefix(program, pluginPrefix)}
	}
	root.SilenceErrors = true
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		printError(errOut, err)
		return 1
	}
	return 0
}

// printError writes err as kubectl does: "Error from server (NotFound): …" for the API
// server's refusals, "error: …" for the rest, one line per error of an aggregate.
func printError(w io.Writer, err error) {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			printError(w, e)
		}
		return
	}
	msg, ok := cmdutil.StandardErrorMessage(err)
	if !ok {
		msg = "error: " + err.Error()
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	fmt.Fprint(w, msg)
}
