package record

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// Marshal renders r as one JSON line, without the trailing newline: the bytes json.Marshal
// writes for it. A lab logging every watch event writes two records per event and informer
// (WATCH-EVENT and HANDLER; 640,000 for 16 informers of 20,000 objects), and json.Marshal's
// reflection was a tenth of its CPU, so the records of strings and numbers only, which those
// are, are appended field by field; the others (annotations, items, body, stats, health) go
// through json.Marshal. TestMarshalIsJSONMarshal holds the two to the same bytes.
func (r Record) Marshal() ([]byte, error) {
	if r.Annotations != nil || r.Items != nil || r.Body != nil || r.Stats != nil || r.Health != nil {
		return json.Marshal(r)
	}
	if y := r.Time.Year(); y < 0 || y > 9999 {
		return json.Marshal(r) // and its error
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"schema":`...)
	b = strconv.AppendInt(b, int64(r.Schema), 10)
	b = append(b, `,"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","source":`...)
	b = appendJSONString(b, r.Source)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, string(r.Kind))
	// The omitempty fields, in Record's order.
	for _, f := range [...]struct{ key, value string }{
		{`,"tag":`, r.Tag}, {`,"step":`, r.Step}, {`,"value":`, r.Value}, {`,"detail":`, r.Detail},
		{`,"method":`, r.Method}, {`,"path":`, r.Path}, {`,"query":`, r.Query}, {`,"accept":`, r.Accept},
	} {
		if f.value != "" {
			b = appendJSONString(append(b, f.key...), f.value)
		}
	}
	if r.Status != 0 {
		b = strconv.AppendInt(append(b, `,"status":`...), int64(r.Status), 10)
	}
	for _, f := range [...]struct{ key, value string }{{`,"contentType":`, r.ContentType}, {`,"encoding":`, r.Encoding}, {`,"error":`, r.Error}} {
		if f.value != "" {
			b = appendJSONString(append(b, f.key...), f.value)
		}
	}
	if r.Millis != 0 {
		b = strconv.AppendInt(append(b, `,"ms":`...), r.Millis, 10)
	}
	for _, f := range [...]struct{ key, value string }{
		{`,"server":`, r.Server}, {`,"event":`, r.Event}, {`,"namespace":`, r.Namespace}, {`,"name":`, r.Name}, {`,"rv":`, r.RV},
	} {
		if f.value != "" {
			b = appendJSONString(append(b, f.key...), f.value)
		}
	}
	if r.Tick != 0 {
		b = strconv.AppendInt(append(b, `,"tick":`...), int64(r.Tick), 10)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as encoding/json writes a string: quoted; backslash, quote and
// the control characters escaped (\b \f \n \r \t by name); <, > and & escaped as \u00XX, as
// its HTML-safe default does; invalid UTF-8 replaced by \ufffd; U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
