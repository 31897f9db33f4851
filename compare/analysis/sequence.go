package analysis

import (
	"fmt"
	"informer-lab/record"
	"regexp"
	"strconv"
	"strings"
)

// A step sequence is spelled one way wherever it is shown (the matrix's cells, make observe's
// report): each request with the ERROR events its stream carried ("WATCH→410"), a run of the
// same once with its count ("STREAM(422)×2"), then the number of requests.

// Unit is one request with the ERROR events its stream carried, Lo times in a row; Hi > Lo
// where the patterns of several informers were merged and their counts differ.
type Unit struct {
	Text   string
	Lo, Hi int
}

// Pattern is a sequence of steps compressed into units.
type Pattern struct {
	Units        []Unit
	ReqLo, ReqHi int // how many requests: a range where merged
}

// Token names a step by its token alone ("WATCH", "STREAM(422)", "410").
func Token(s Step) string { return s.Token }

// Compress turns steps into a pattern: each request named by name, with the ERROR events its
// stream carried; an ERROR before any request (on the stream the informer synced on) is a unit
// of its own. Consecutive equal units are counted once.
func Compress(steps []Step, name func(Step) string) Pattern {
	var texts []string
	p := Pattern{}
	for _, s := range steps {
		switch {
		case s.Request:
			p.ReqLo++
			texts = append(texts, name(s))
		case len(texts) > 0:
			texts[len(texts)-1] += "→" + s.Token
		default:
			texts = append(texts, s.Token)
		}
	}
	p.ReqHi = p.ReqLo
	for _, t := range texts {
		if n := len(p.Units); n > 0 && p.Units[n-1].Text == t {
			p.Units[n-1].Lo++
			p.Units[n-1].Hi++
			continue
		}
		p.Units = append(p.Units, Unit{Text: t, Lo: 1, Hi: 1})
	}
	return p
}

// Shape is the pattern's units without their counts: patterns of one shape merge.
func (p Pattern) Shape() string {
	var parts []string
	for _, u := range p.Units {
		parts = append(parts, u.Text)
	}
	return strings.Join(parts, "→")
}

// Merge folds q, of the same shape, into p: each count becomes the range of both. ok is false,
// and p unchanged, when the shapes differ.
func (p Pattern) Merge(q Pattern) (merged Pattern, ok bool) {
	if p.Shape() != q.Shape() {
		return p, false
	}
	merged = Pattern{Units: make([]Unit, len(p.Units)), ReqLo: min(p.ReqLo, q.ReqLo), ReqHi: max(p.ReqHi, q.ReqHi)}
	for i, u := range p.Units {
		merged.Units[i] = Unit{Text: u.Text, Lo: min(u.Lo, q.Units[i].Lo), Hi: max(u.Hi, q.Units[i].Hi)}
	}
	return merged, true
}

// Spell writes the pattern: a repeated unit with its count after "×" ("×2–3" where merged),
// in parentheses when the unit has arrows of its own ("(WATCH→410)×2"), after a space when it
// is words ("WATCH from rv ×3"); with reqs, the number of requests: "WATCH(error)×2→WATCH
// (3 req)". An empty pattern spells "".
func (p Pattern) Spell(reqs bool) string {
	var parts []string
	for _, u := range p.Units {
		s := u.Text
		if u.Hi > 1 {
			switch {
			case strings.Contains(s, "→"):
				s = "(" + s + ")"
			case strings.Contains(s, " "):
				s += " "
			}
			s += "×" + span(u.Lo, u.Hi)
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, "→")
	if reqs && s != "" {
		s += " (" + span(p.ReqLo, p.ReqHi) + " req)"
	}
	return s
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// Sequence spells steps by their tokens, with the number of requests: "WATCH→410→LIST→WATCH
// (3 req)"; none is what it says without any step.
func Sequence(steps []Step, none string) string {
	if s := Compress(steps, Token).Spell(true); s != "" {
		return s
	}
	return none
}

// spelledRequests finds what Spell, record.Classify and the direct List()'s label end with: the
// number of requests, " (3 req)", or a range where informers were merged, " (3–4 req)".
var spelledRequests = regexp.MustCompile(` \((\d+)(?:–(\d+))? req\)`)

// failedWatches finds the watches a spelled text says failed before reaching the server
// ("WATCH(error)", "WATCH(error)×2", "WATCH(error)×2–3"): the retries while a server is down.
var failedWatches = regexp.MustCompile(regexp.QuoteMeta(record.TokenWatch+"(error)") + `(?:×(\d+)(?:–(\d+))?)?`)

// SpelledFailedWatches is how many failed watches a spelled text holds (of a range, its upper
// end). Their number depends on how long a server was down and where each retry's backoff fell,
// not on the handshake, so a comparison of two cells' requests leaves them out.
func SpelledFailedWatches(text string) int {
	total := 0
	for _, m := range failedWatches.FindAllStringSubmatch(text, -1) {
		total += upperEnd(m, 1)
	}
	return total
}

// upperEnd is the count a match of a spelled count holds, m[1] or the range m[1]–m[2]: of a
// range, its upper end; none when m[1] is empty.
func upperEnd(m []string, none int) int {
	n := none
	if m[1] != "" {
		n, _ = strconv.Atoi(m[1])
	}
	if m[2] != "" {
		n, _ = strconv.Atoi(m[2])
	}
	return n
}

// SpelledRequests reads back the request counts a spelled text holds, in order (a verdict of
// several informers, "A: … (3 req); B: … (4 req)", holds several): of a range, its upper end.
func SpelledRequests(text string) []int {
	var out []int
	for _, m := range spelledRequests.FindAllStringSubmatch(text, -1) {
		out = append(out, upperEnd(m, 0))
	}
	return out
}
