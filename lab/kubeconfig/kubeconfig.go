// Package kubeconfig is the one loader of a user's kubeconfig file, for the labs and the harness
// alike: one context of one file, with the file's own credentials (client certificates, bearer
// tokens, exec plugins), resolved by client-go's clientcmd. Its errors are one line that names
// the file and says what to fix; none ever quotes a credential.
package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"informer-lab/record"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Load returns the client configuration of context in the kubeconfig file at path: its
// current-context when context is "". Only that file is read (not $KUBECONFIG, not
// ~/.kube/config), and relative paths in it (certificate files, an exec plugin's command) are
// taken from the file's own directory, as kubectl takes them.
func Load(path, context string) (*rest.Config, error) {
	if path == "" {
		return nil, errors.New("no kubeconfig given: pass the path of a kubeconfig file")
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kubeconfig %s: no such file: pass the path of a kubeconfig file", path)
		}
		return nil, fmt.Errorf("kubeconfig %s: %s", path, record.OneLine(err))
	}
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s does not parse (%s): fix the file or pass another", path, record.OneLine(err))
	}
	if err := clientcmd.ResolveLocalPaths(raw); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %s", path, record.OneLine(err))
	}
	contexts := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		contexts = append(contexts, name)
	}
	sort.Strings(contexts)
	switch {
	case len(contexts) == 0:
		return nil, fmt.Errorf("kubeconfig %s has no contexts: it does not say which cluster and user to use", path)
	case context == "" && raw.CurrentContext == "":
		return nil, fmt.Errorf("kubeconfig %s has no current-context: pass --context, one of %s", path, strings.Join(contexts, ", "))
	case context == "" && raw.Contexts[raw.CurrentContext] == nil:
		return nil, fmt.Errorf("kubeconfig %s: its current-context %q is not in it: pass --context, one of %s", path, raw.CurrentContext, strings.Join(contexts, ", "))
	case context != "" && raw.Contexts[context] == nil:
		return nil, fmt.Errorf("kubeconfig %s has no context %q: its contexts are %s", path, context, strings.Join(contexts, ", "))
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		// clientcmd's validation names fields and files, never their contents.
		return nil, fmt.Errorf("kubeconfig %s%s: %s", path, inContext(context), record.OneLine(err))
	}
	return cfg, nil
}

func inContext(context string) string {
	if context == "" {
		return ""
	}
	return fmt.Sprintf(", context %q", context)
}
