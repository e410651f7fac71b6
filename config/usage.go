package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

const usageHeader = `Usage: quarry [config.json] [--option value]...
       quarry livequery [config.json] [--option value]...   (standalone LiveQuery server)
       quarry import|export|backup|restore -h                (move data in and out)

Quarry is a Parse Server compatible backend. Each option below can be set in
four places; a later one wins over an earlier one:
  1. built-in defaults (shown below)
  2. a JSON config file given as the only positional argument, whose keys
     are the option names: {"appId": "myApp", "port": 1337,
     "liveQuery": {"classNames": ["Game"]}}. Parse Server config files work,
     including the {"apps": [{...}]} form with exactly one app; options
     Quarry does not support yet are ignored with a warning (list at the end).
  3. environment variables: QUARRY_<NAME>, the name in UPPER_SNAKE case
     (appId -> QUARRY_APP_ID), or the Parse Server variable listed with the
     option; QUARRY_* wins over the Parse Server name. Empty means unset.
  4. command-line flags: --name value or --name=value (one dash works too).
     bool: --name alone means true, --name=false (or --name false) false.
     list: comma-separated, a,b,c. size: bytes or 512kb, 10mb, 1gb.
     json: JSON text of an object. Config files take JSON values.

With no arguments Quarry starts in development mode: appId "quarry-dev",
data in ./quarry-data, and a master key generated on first start and kept
with the data. Only localhost may use the master key (see masterKeyIps).

  -h, --help
      print this help and exit
`

// Usage writes the --help text: every option with its type, default,
// meaning, environment variables and config file form, grouped by topic,
// then the Parse Server options that are accepted and ignored.
func Usage(w io.Writer) {
	var b strings.Builder
	b.WriteString(usageHeader)
	defaults := Defaults()
	for _, g := range groups {
		fmt.Fprintf(&b, "\n%s\n", g)
		for _, o := range options {
			if o.group != g {
				continue
			}
			fmt.Fprintf(&b, "  --%s <%s>  (default: %s)\n", o.name, o.typeName(), o.defaultText(defaults))
			fmt.Fprintf(&b, "      %s\n", o.usage)
			fmt.Fprintf(&b, "      env: %s\n", strings.Join(o.envNames(), ", "))
			fmt.Fprintf(&b, "      file: %s\n", o.fileForm())
		}
	}
	b.WriteString("\nParse Server options accepted in any form but ignored, with a warning\nsaying why (no meaning here, or not supported yet):\n")
	b.WriteString(wrap(strings.Join(unsupported, ", "), 76, "  "))
	io.WriteString(w, b.String())
}

// defaultText is the default shown by Usage, read from Defaults unless the
// table gives a description.
func (o *option) defaultText(d *Options) string {
	if o.def != "" {
		return o.def
	}
	switch v := o.field(d).(type) {
	case *string:
		if *v == "" {
			return "none"
		}
		return strconv.Quote(*v)
	case *int:
		return strconv.Itoa(*v)
	case *bool:
		return strconv.FormatBool(*v)
	case *[]string:
		if len(*v) == 0 {
			return "none"
		}
		return strings.Join(*v, ",")
	case *int64:
		return FormatSize(*v)
	case *time.Duration:
		return strconv.FormatInt(int64(*v/time.Second), 10)
	case *[]map[string]any:
		return "none"
	}
	return ""
}

// fileForm shows how the option is written in a JSON config file.
func (o *option) fileForm() string {
	example := map[string]string{
		"string": `"..."`, "int": "123", "bool": "true", "list": `["a", "b"]`,
		"size": `"10mb"`, "seconds": "3600", "json": "{...}", "objects": "[{...}]",
	}[o.typeName()]
	parts := strings.Split(o.name, ".")
	for i := len(parts) - 1; i > 0; i-- {
		example = fmt.Sprintf(`{"%s": %s}`, parts[i], example)
	}
	return fmt.Sprintf(`"%s": %s`, parts[0], example)
}

// wrap breaks s at spaces into lines of at most width runes, each indented.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}
