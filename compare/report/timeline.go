package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Timeline geometry, in SVG units.
const (
	tlWidth    = 1320
	tlLane     = 13  // height of one watcher's lane
	tlGap      = 10  // between two writes
	tlTop      = 30  // room for the axis
	tlPlotLeft = 440 // left of the plot: write and lane labels
	tlPlotEnd  = 1170
)

// labColors is how many lab colours the page's CSS has (.lab0 ... .lab7): seven labs, one each.
const labColors = 8

// lane is one watcher: a lab's informer.
type lane struct {
	lab   int // index in rep.Labs, for its colour
	name  string
	watch *analysis.Watcher
}

// timelineSVG draws one row per harness write and, in it, one lane per watcher with a dot where
// that watcher received the write's event, relative to the harness's record of the write.
func timelineSVG(rep *analysis.Report) template.HTML {
	var lanes []lane
	for i, l := range rep.Labs {
		for _, tag := range l.Tags {
			lanes = append(lanes, lane{i, l.Name + " " + tag, l.Watchers[tag]})
		}
	}
	if len(rep.Writes) == 0 || len(lanes) == 0 {
		return `<p class="note">no harness writes, or no watchers: nothing to plot</p>`
	}

	// seen[w][l] is when lane l received write w's event; ok[w][l] whether it did.
	seen := make([][]time.Duration, len(rep.Writes))
	ok := make([][]bool, len(rep.Writes))
	lo, hi := 0.0, 0.0
	for w, wr := range rep.Writes {
		seen[w], ok[w] = make([]time.Duration, len(lanes)), make([]bool, len(lanes))
		for l, ln := range lanes {
			if ev, found := eventOf(ln.watch, wr); found {
				seen[w][l], ok[w][l] = ev.Time.Sub(wr.Time), true
				lo, hi = math.Min(lo, msf(seen[w][l])), math.Max(hi, msf(seen[w][l]))
			}
		}
	}
	step := tickStep(hi - lo)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if hi == lo {
		hi = lo + step
	}
	xOf := func(ms float64) float64 { return tlPlotLeft + (ms-lo)/(hi-lo)*(tlPlotEnd-tlPlotLeft) }

	band := len(lanes)*tlLane + 6
	height := tlTop + len(rep.Writes)*(band+tlGap) + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" width="%d" height="%d" viewBox="0 0 %d %d" role="img"><title>steady phase: fan-out of each write</title>`,
		tlWidth, height, tlWidth, height)
	for i := 0; lo+float64(i)*step <= hi+step/2; i++ {
		t := math.Round((lo+float64(i)*step)*1000) / 1000 // no 0.30000000000000004
		if t == 0 {
			t = 0 // not -0
		}
		x := xOf(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text x="%.1f" y="14" text-anchor="middle">%g ms</text>`,
			x, tlTop-8, x, height-4, x, t)
	}
	fmt.Fprintf(&b, `<text x="%d" y="14">write</text><text x="%d" y="14" text-anchor="end">fan-out skew</text>`, 4, tlWidth-4)
	for w, wr := range rep.Writes {
		y := tlTop + w*(band+tlGap)
		fmt.Fprintf(&b, `<g class="write" data-rv="%s"><rect class="band" x="0" y="%d" width="%d" height="%d"/>`, esc(wr.RV), y, tlWidth, band)
		fmt.Fprintf(&b, `<text x="4" y="%d" font-weight="600">#%d %s</text><text x="4" y="%d">rv=%s</text>`,
			y+14, w+1, esc(wr.Event+" "+wr.Name), y+28, esc(wr.RV))
		first, last := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
		for l, ln := range lanes {
			ly := y + 3 + l*tlLane + tlLane/2
			fmt.Fprintf(&b, `<text x="%d" y="%d" class="lab%d">%s</text>`, tlPlotLeft-150, ly+4, ln.lab%labColors, esc(ln.name))
			if !ok[w][l] {
				fmt.Fprintf(&b, `<text class="missing" x="%d" y="%d">missing: no event with rv=%s</text>`, tlPlotLeft+4, ly+4, esc(wr.RV))
				continue
			}
			d := seen[w][l]
			first, last = min(first, d), max(last, d)
			fmt.Fprintf(&b, `<circle class="event lab%d" data-lab="%s" cx="%.1f" cy="%d" r="4"><title>%s received %s at %+.3f ms</title></circle>`,
				ln.lab%labColors, esc(rep.Labs[ln.lab].Name), xOf(msf(d)), ly, esc(ln.name), esc(wr.Event+" "+wr.Name), msf(d))
		}
		skew := "—"
		if last > first {
			skew = ms(last - first)
		} else if last == first {
			skew = "0.0 ms"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" font-weight="600">%s</text></g>`, tlWidth-4, y+band/2+4, esc(skew))
	}
	fmt.Fprintf(&b, `<line class="zero" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, xOf(0), tlTop-8, xOf(0), height-4)
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// eventOf finds the watcher's event for a write: the one with its rv, as the skew is measured.
func eventOf(w *analysis.Watcher, wr record.Record) (record.Record, bool) {
	if w == nil {
		return record.Record{}, false
	}
	for _, ev := range w.Events {
		if ev.RV == wr.RV && ev.Event != "BOOKMARK" && ev.Event != "ERROR" {
			return ev, true
		}
	}
	return record.Record{}, false
}

// tickStep picks a 1-2-5 step that cuts span into at most 8 intervals.
func tickStep(span float64) float64 {
	for step := 0.01; ; step *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if span/(step*m) <= 8 {
				return step * m
			}
		}
	}
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
