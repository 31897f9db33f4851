package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
users:
- name: token-user
  user: {token: secret-token-value}
- name: exec-user
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: ./plugin, args: [--flag], interactiveMode: Never}
contexts:
- name: with-token
  context: {cluster: c, user: token-user}
- name: with-exec
  context: {cluster: c, user: exec-user}
current-context: with-token
`

func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The context asked for is the one used, its exec plugin and files resolved from the file's
// directory, as kubectl resolves them.
func TestLoadPicksTheContext(t *testing.T) {
	path := write(t, "config", twoContexts)
	dir := filepath.Dir(path)
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), nil, 0o600); err != nil { // clientcmd checks it is there
		t.Fatal(err)
	}
	cfg, err := Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "secret-token-value" || cfg.CAFile != filepath.Join(dir, "ca.crt") {
		t.Errorf("current context: token set %v, CA file %q; want the token user and %s", cfg.BearerToken != "", cfg.CAFile, filepath.Join(dir, "ca.crt"))
	}
	cfg, err = Load(path, "with-exec")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ExecProvider == nil || cfg.ExecProvider.Command != filepath.Join(dir, "plugin") || cfg.BearerToken != "" {
		t.Errorf("context with-exec: exec %+v, token set %v; want the plugin at %s and no token", cfg.ExecProvider, cfg.BearerToken != "", filepath.Join(dir, "plugin"))
	}
}

// Every mistake is one line that names the file and what to do; none quotes a credential.
func TestLoadErrors(t *testing.T) {
	noCurrent := strings.Replace(twoContexts, "current-context: with-token", "", 1)
	for _, tc := range []struct {
		name, content, context, want string
	}{
		{"missing", "", "", "no such file: pass the path of a kubeconfig file"},
		{"garbage", "clusters: [unclosed\n  token: secret-token-value", "", "does not parse"},
		{"no-contexts", "apiVersion: v1\nkind: Config\n", "", "has no contexts"},
		{"no-current", noCurrent, "", "has no current-context: pass --context, one of with-exec, with-token"},
		{"unknown-context", twoContexts, "prod", `has no context "prod": its contexts are with-exec, with-token`},
	} {
		path := filepath.Join(t.TempDir(), "config")
		if tc.name != "missing" {
			path = write(t, "config", tc.content)
		}
		_, err := Load(path, tc.context)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, path) || strings.Contains(msg, "\n") || strings.Contains(msg, "secret-token-value") {
			t.Errorf("%s: %q; want one line naming %s with %q and no credential", tc.name, msg, path, tc.want)
		}
	}
}
