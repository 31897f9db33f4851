package analysis

import "informer-lab/record"

// DirectList is what a lab's one direct typed List() did (lab -direct-list): the call a
// controller makes outside its informers. With the WatchListClient gate on, client-go
// v0.31–v0.33 try to stream it; v0.34 on send a plain LIST (client-go moved streaming to the
// reflector).
type DirectList struct {
	Label    string   // the requests, e.g. "LIST (1 req)", "STREAM (1 req)", "STREAM(422)→LIST (2 req)", "STREAM→fallback: blueprint annotation missing (2 req)"
	Fallback string   // why a stream that got through was given up for a LIST, "" when none was
	Result   string   // what List() returned, from the lab's SETUP direct-list record
	Returned bool     // the lab recorded the call's end (its SETUP direct-list record)
	Warnings []string // what client-go logged through klog during the call (its reason to fall back)
	Lines    []string // every record of the call, normalized, in the order the lab wrote them
}

// directList reads a lab's TagDirect records; nil when the lab made no direct call.
func directList(recs []record.Record) *DirectList {
	if len(recs) == 0 {
		return nil
	}
	d := &DirectList{Result: "no SETUP direct-list record: the call did not return before the lab stopped"}
	var reqs []record.Record
	var toks []string
	endBookmark, noBlueprint := false, false
	for _, r := range recs {
		d.Lines = append(d.Lines, NormalizeRecord(r))
		switch {
		case r.Kind == record.HTTP:
			reqs = append(reqs, r)
			toks = append(toks, record.Token(r))
		case record.IsEndBookmark(r):
			endBookmark = true
			noBlueprint = noBlueprint || record.BlueprintMissing(r)
		case r.Kind == record.Setup && r.Step == record.StepKlog:
			d.Warnings = append(d.Warnings, r.Value)
		case r.Kind == record.Setup && r.Step == record.StepDirect:
			d.Result, d.Returned = r.Value, true
			if r.Detail != "" {
				d.Result += ": " + r.Detail
			}
		}
	}
	// The decoded events are written by the wire's decoder goroutine, so the bookmark may be
	// recorded after the LIST that replaced its stream: the reason is read from the whole call,
	// not from the order of its records.
	if n := len(toks); n >= 2 && toks[0] == record.TokenStream && toks[n-1] == record.TokenList {
		switch {
		case endBookmark && noBlueprint:
			d.Fallback = FallbackBlueprint
		case len(d.Warnings) > 0:
			d.Fallback = d.Warnings[0]
		default:
			d.Fallback = "stream given up"
		}
		d.Label = fallbackLabel(d.Fallback, n)
		return d
	}
	_, d.Label = record.Classify(reqs)
	return d
}
