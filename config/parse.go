package config

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Prefix starts every obroute DSN; anything else is read as a plain go-sql-driver DSN.
const Prefix = "obroute:"

// ParseDSN reads a DSN (see the package doc) and validates the result. Its errors never show
// a password the DSN carries.
func ParseDSN(dsn string) (*Config, error) {
	c, err := parseDSN(dsn)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		secrets := DSNSecrets(dsn)
		if c != nil {
			secrets = append(secrets, c.Secrets()...)
		}
		return nil, ScrubError(err, secrets)
	}
	return c, nil
}

func parseDSN(dsn string) (*Config, error) {
	if !strings.HasPrefix(dsn, Prefix) {
		return &Config{Backends: []Backend{{Name: RoleHot, Role: RoleHot, DSN: dsn}}}, nil
	}
	items, err := splitItems(dsn[len(Prefix):])
	if err != nil {
		return nil, err
	}
	c := &Config{}
	// config= is read first, whatever its position, so the DSN's keys add to the file.
	var file []string
	for _, it := range items {
		if it.key == "config" {
			file = append(file, it.value)
		}
	}
	if len(file) > 1 {
		return nil, errorf("config", "given twice; give one YAML file")
	}
	if len(file) == 1 {
		if c, err = LoadFile(file[0]); err != nil {
			return nil, err
		}
	}
	given := map[string]bool{}
	for i, it := range items {
		if strings.ContainsAny(it.key, "@:/()") {
			// Never echo it: it is probably a backend DSN, password included.
			return nil, errorf(fmt.Sprintf("DSN item %d", i+1), "not a key=value item (it looks like a go-sql-driver DSN); write backends.NAME.dsn=user:password@tcp(host:port)/db")
		}
		if given[it.key] {
			return nil, errorf(it.key, "given twice; give each key once")
		}
		given[it.key] = true
		if it.key == "config" {
			continue
		}
		if err := c.set(it.key, it.value); err != nil {
			return nil, err
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
		return nil, fmt.Errorf("invalid YAML: %s", Scrub(err.Error(), c.Secrets()))
	}
	return c, nil
}
