package analysis

import (
	"regexp"

	"informer-lab/record"
)

// volatileInText are the values of a printed line that change from run to run: rvs, random
// timeouts, ticks, durations, byte counts, temporary and run directories. NormalizeText
// replaces them with the placeholders the record normalization uses.
var volatileInText = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b(rv|resourceVersion)=[1-9][0-9]*`), "${1}=" + record.PlaceholderRV},
	{regexp.MustCompile(`(too old resource version): [0-9]+ \([0-9]+\)`), "${1}: " + record.PlaceholderRV + " (" + record.PlaceholderRV + ")"},
	{regexp.MustCompile(`\b(timeout)=[0-9hms.]+`), "${1}=" + record.PlaceholderTimeout},
	{regexp.MustCompile(`\b(timeoutSeconds)=[0-9]+`), "${1}=" + record.PlaceholderTimeout},
	{regexp.MustCompile(`\b(data\.tick|bytes|wire|ms)=[0-9]+`), "${1}=<N>"},
	// Sizes as FormatBytes prints them ("2.6 KiB"): a body's uids, timestamps and rvs change
	// its length by a few bytes from run to run.
	{regexp.MustCompile(`\b[0-9]+(\.[0-9]+)? [KMGT]iB\b`), "<SIZE>"},
	{regexp.MustCompile(`\b[0-9]+(\.[0-9]+)? ?(µs|ms|s|m)\b`), "<DUR>"},
	{regexp.MustCompile(`(/[A-Za-z0-9._-]+)*/(tmp|out)/[A-Za-z0-9._/-]*`), "<PATH>"},
	{regexp.MustCompile(`-{3,}`), "---"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

// NormalizeText normalizes one printed line (a lab's text line, a line of the compare report,
// a documentation excerpt) so that the same line from two runs compares equal.
func NormalizeText(line string) string {
	line = record.Scrub(line)
	for _, v := range volatileInText {
		line = v.re.ReplaceAllString(line, v.with)
	}
	return line
}
