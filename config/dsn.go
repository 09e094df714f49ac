package config

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/obroute/obroute/routing"
	"github.com/obroute/obroute/shadow"
)

// Prefix starts every obroute DSN; anything else is read as a plain go-sql-driver DSN.
const Prefix = "obroute:"

// ParseDSN reads a DSN (see the package doc) and validates the result.
func ParseDSN(dsn string) (*Config, error) {
	c, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseDSN(dsn string) (*Config, error) {
	if !strings.HasPrefix(dsn, Prefix) {
		return &Config{Backends: []Backend{{Name: routing.RoleHot, Role: routing.RoleHot, DSN: dsn}}}, nil
	}
	items, err := splitItems(dsn[len(Prefix):])
	if err != nil {
		return nil, err
	}
	c := &Config{}
	// config= is read first, whatever its position, so the DSN's keys add to the file.
	for _, it := range items {
		if it.key == "config" {
			if c, err = LoadFile(it.value); err != nil {
				return nil, err
			}
		}
	}
	var mappings []shadow.Mapping
	for i, it := range items {
		if strings.ContainsAny(it.key, "@:/()") {
			// Never echo it: it is probably a backend DSN, password included.
			return nil, errorf(fmt.Sprintf("DSN item %d", i+1), "not a key=value item (it looks like a go-sql-driver DSN); write backend.NAME=user:password@tcp(host:port)/db")
		}
		if err := c.set(it.key, it.value, &mappings); err != nil {
			return nil, err
		}
	}
	if len(mappings) > 0 {
		if c.Shadow == nil {
			c.Shadow = &shadow.Rule{}
		}
		c.Shadow.Mappings = append(c.Shadow.Mappings, mappings...)
		if c.Shadow.DefaultAlgorithm == "" && len(c.Shadow.Algorithms) == 0 {
			c.Shadow.Algorithms = []shadow.Algorithm{{Name: "hint", Kind: shadow.KindHint}}
			c.Shadow.DefaultAlgorithm = "hint"
		}
	}
	return c, nil
}

type item struct{ key, value string }

// splitItems splits "k=v;k=v" with ";;" standing for a literal ";".
func splitItems(s string) ([]item, error) {
	var items []item
	var cur strings.Builder
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		k, v, ok := strings.Cut(text, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			// Never echo the item: it may be a backend DSN with a password.
			return errorf(fmt.Sprintf("DSN item %d", len(items)+1), "not of the form key=value; separate items with ';' and write a ';' inside a value as ';;'")
		}
		items = append(items, item{key: k, value: strings.TrimSpace(v)})
		return nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != ';' {
			cur.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == ';' {
			cur.WriteByte(';')
			i++
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return items, nil
}

func (c *Config) backend(name string) *Backend {
	if b := c.Backend(name); b != nil {
		return b
	}
	c.Backends = append(c.Backends, Backend{Name: name})
	return &c.Backends[len(c.Backends)-1]
}

func (c *Config) timeTable(name string) *routing.TimeTable {
	for i := range c.TimeTables {
		if c.TimeTables[i].Table == name {
			return &c.TimeTables[i]
		}
	}
	c.TimeTables = append(c.TimeTables, routing.TimeTable{Table: name})
	return &c.TimeTables[len(c.TimeTables)-1]
}

func (c *Config) set(key, value string, mappings *[]shadow.Mapping) error {
	head, rest, _ := strings.Cut(key, ".")
	switch {
	case key == "config":
		return nil
	case head == "backend" && rest != "":
		b := c.backend(rest)
		if b.DSN != "" {
			return errorf(key, "backend %q given twice; give each backend once", rest)
		}
		b.DSN = value
	case head == "role" && rest != "":
		c.backend(rest).Role = value
	case key == "default":
		c.Default = value
	case head == "route" && rest != "":
		if c.Routes == nil {
			c.Routes = map[string]string{}
		}
		c.Routes[strings.ToLower(rest)] = value
	case key == "enable_cached_server":
		v, err := strconv.ParseBool(value)
		if err != nil {
			return errorf(key, "%q is not a boolean; write true or false", value)
		}
		c.CachedServer = v
	case head == "shadow" && rest != "":
		*mappings = append(*mappings, shadow.Mapping{Production: rest, Shadow: value})
	case head == "time" && rest != "":
		table, opt, ok := strings.Cut(rest, ".")
		if !ok || table == "" {
			return errorf(key, "write time.TABLE.shard_key, time.TABLE.hot_days or time.TABLE.hot_months")
		}
		t := c.timeTable(strings.ToLower(table))
		switch opt {
		case "shard_key":
			t.ShardKey = value
		case "hot_days", "hot_months":
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 {
				return errorf(key, "%q is not a positive whole number", value)
			}
			if opt == "hot_days" {
				t.Window.Days = n
			} else {
				t.Window.Months = n
			}
		default:
			return errorf(key, "unknown time option %q; use shard_key, hot_days or hot_months (more in the YAML file)", opt)
		}
	case key == "metadata.backend":
		c.Metadata.Backend = value
	case key == "metadata.table":
		c.Metadata.Table = value
	case key == "metadata.refresh":
		if err := c.Metadata.Refresh.UnmarshalText([]byte(value)); err != nil {
			return errorf(key, "%v", err)
		}
	case key == "parse_cache_size":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return errorf(key, "%q is not a whole number ≥ 0", value)
		}
		c.ParseCacheSize = n
	default:
		if ok, err := c.setResilience(key, value); ok {
			return err
		}
		return errorf(key, "unknown DSN key; see the DSN reference in README.md (backend.NAME, role.NAME, default, route.TABLE, …)")
	}
	return nil
}

// LoadFile reads a YAML configuration file (not yet validated: ParseDSN and connector.New do that).
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errorf("config="+path, "cannot read the file: %v", err)
	}
	c, err := ParseYAML(data)
	if err != nil {
		return nil, errorf("config file "+path, "%v", err)
	}
	return c, nil
}

// ParseYAML reads a YAML configuration. Unknown fields are errors.
func ParseYAML(data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	c := &Config{}
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("invalid YAML: %s", redactYAMLError(err.Error(), c))
	}
	return c, nil
}

// redactYAMLError keeps YAML errors (which quote values) from showing a backend DSN.
func redactYAMLError(msg string, c *Config) string {
	for _, b := range c.Backends {
		if b.DSN != "" {
			msg = redact(msg, b.DSN)
		}
	}
	return msg
}
