package capture

import (
	"fmt"
	"time"
)

// ParseTime reads a filter's time bound (Filter.Since, Until): RFC 3339,
// or YYYY-MM-DD[ HH:MM:SS] in loc; "" is no bound (the zero time).
func ParseTime(v string, loc *time.Location) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 or YYYY-MM-DD HH:MM:SS", v)
}
