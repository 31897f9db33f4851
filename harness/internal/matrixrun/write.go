package matrixrun

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"informer-lab/compare/matrix"
)

// write shows the grid on the terminal and writes matrix.md and matrix.json into the run
// directory; with -docs also its page (res.Page(): docs/matrix.md, faults.md, kinds.md or
// servers.md) and the cells' logs it links to.
func write(res *matrix.Result, dir string, o options, stdout io.Writer, say func(string, ...any)) error {
	res.Terminal(stdout, isTerminal(stdout))
	if err := res.Save(filepath.Join(dir, "matrix.json")); err != nil {
		return err
	}
	var md bytes.Buffer
	res.Markdown(&md)
	if err := os.WriteFile(filepath.Join(dir, "matrix.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	if !o.docs {
		return nil
	}
	// docs/matrix.md links each cell to its log under docs/matrix/, copied from this run; the
	// other pages alike (matrix.Pages).
	name := res.Page()
	docs := filepath.Join(o.root, "docs")
	logs := filepath.Join(docs, name)
	if err := os.RemoveAll(logs); err != nil {
		return err
	}
	pub := *res
	pub.Cells = append([]matrix.Cell(nil), res.Cells...)
	for i, c := range pub.Cells {
		pub.Cells[i].Run = ""
		if c.Log == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, c.Log))
		if err != nil {
			return err
		}
		dst := filepath.Join(logs, c.Log)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		pub.Cells[i].Log = filepath.ToSlash(filepath.Join(name, c.Log))
	}
	md.Reset()
	pub.Markdown(&md)
	if err := os.WriteFile(filepath.Join(docs, name+".md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	if err := pub.Save(filepath.Join(logs, name+".json")); err != nil {
		return err
	}
	say("wrote %s and the cells' logs under %s", filepath.Join(docs, name+".md"), logs)
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
