package config

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// DSN keys
//
// A DSN key is the path of a YAML field, its parts joined with '.': parse_cache_size,
// timeouts.read, metadata.refresh. An element of a list is named by its key field (a backend by
// its name, a time table by its table, a shadow mapping by its production backend): the key
// backends.hot.dsn sets the dsn of the backend named hot, time_tables.orders.hot_window.months
// the hot window of time table orders, and the element is added when it is new. A map entry is
// named by its key (routes.audit_log=cold). A list of strings is written comma-separated
// (services.orders.candidates=10.0.0.1:2881,10.0.0.2:2881). So YAML, DSN and Go share one name
// per setting, and every field the YAML file has can be set in a DSN.

// listKeys are the fields that name the elements of a list in a DSN key, by YAML name.
var listKeys = []string{"name", "table", "production"}

// durationType is time.Duration, which DSN values and YAML write as "30s".
var durationType = reflect.TypeOf(time.Duration(0))

// set assigns value to the setting named key (see DSN keys).
func (c *Config) set(key, value string) error {
	return setPath(reflect.ValueOf(c).Elem(), strings.Split(key, "."), key, value)
}

// setPath assigns value to the field of v that path names; key is the whole key, for errors.
func setPath(v reflect.Value, path []string, key, value string) error {
	if len(path) == 0 {
		return setValue(v, key, value)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.Struct {
			break
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return setPath(v.Elem(), path, key, value)
	case reflect.Struct:
		i := fieldIndex(v.Type(), path[0])
		if i < 0 {
			break
		}
		return setPath(v.Field(i), path[1:], key, value)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
			break
		}
		name := strings.Join(path, ".")
		if name == "" {
			return errorf(key, "no name after %q; write e.g. routes.audit_log=cold", strings.TrimSuffix(key, "."))
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		v.SetMapIndex(reflect.ValueOf(name).Convert(v.Type().Key()), reflect.ValueOf(value).Convert(v.Type().Elem()))
		return nil
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Struct {
			break
		}
		return setElement(v, path, key, value)
	}
	return unknownKey(key)
}

// setElement sets a field of the element of list v that path names: the element's name comes
// first (it may contain dots), then the field's path.
func setElement(list reflect.Value, path []string, key, value string) error {
	elem := list.Type().Elem()
	keyField := listKeyField(elem)
	if keyField < 0 {
		return unknownKey(key)
	}
	// The longest name whose rest is a field path: names may contain dots, field names do not.
	for k := len(path) - 1; k >= 1; k-- {
		name, rest := strings.Join(path[:k], "."), path[k:]
		if !isFieldPath(elem, rest) {
			continue
		}
		if fieldIndex(elem, rest[0]) == keyField && len(rest) == 1 {
			return errorf(key, "the %s is given by the key itself; drop this item", rest[0])
		}
		for i := 0; i < list.Len(); i++ {
			if list.Index(i).Field(keyField).String() == name {
				return setPath(list.Index(i), rest, key, value)
			}
		}
		e := reflect.New(elem).Elem()
		e.Field(keyField).SetString(name)
		list.Set(reflect.Append(list, e))
		return setPath(list.Index(list.Len()-1), rest, key, value)
	}
	return unknownKey(key)
}

// setValue parses value into the leaf field v.
func setValue(v reflect.Value, key, value string) error {
	if v.CanAddr() {
		if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
			if err := u.UnmarshalText([]byte(value)); err != nil {
				return errorf(key, "%v", err)
			}
			return nil
		}
	}
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(value)
		if err != nil {
			return errorf(key, "invalid duration %q: write it like 30s, 5m or 1h", value)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(value)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return errorf(key, "%q is not a boolean; write true or false", value)
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(value)
		if err != nil {
			return errorf(key, "%q is not a whole number", value)
		}
		v.SetInt(int64(n))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		list := reflect.MakeSlice(v.Type(), 0, 0)
		for _, s := range splitList(value) {
			list = reflect.Append(list, reflect.ValueOf(s).Convert(v.Type().Elem()))
		}
		v.Set(list)
	default:
		return errorf(key, "names a group of settings, not one; name one of its fields (see the DSN table in README.md)")
	}
	return nil
}

// fieldIndex returns the index of t's field whose YAML name is name, -1 when there is none.
func fieldIndex(t reflect.Type, name string) int {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && yamlName(f) == name {
			return i
		}
	}
	return -1
}

// listKeyField returns the index of the field naming the elements of a list of t, -1 if none.
func listKeyField(t reflect.Type) int {
	if t.Kind() != reflect.Struct {
		return -1
	}
	for _, k := range listKeys {
		if i := fieldIndex(t, k); i >= 0 && t.Field(i).Type.Kind() == reflect.String {
			return i
		}
	}
	return -1
}

// isFieldPath reports whether path names a field (or a map entry) inside t.
func isFieldPath(t reflect.Type, path []string) bool {
	for len(path) > 0 {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			i := fieldIndex(t, path[0])
			if i < 0 {
				return false
			}
			t, path = t.Field(i).Type, path[1:]
		case reflect.Map:
			return true
		case reflect.Slice:
			return t.Elem().Kind() == reflect.Struct && len(path) >= 2
		default:
			return false
		}
	}
	return true
}

// yamlName is the name of f in YAML files and DSN keys: its yaml tag, "" for a field that has
// none (or "-": not configurable from text).
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func unknownKey(key string) error {
	return errorf(key, "unknown DSN key; keys are the YAML fields' paths, e.g. backends.NAME.dsn, routes.TABLE, timeouts.read (see the DSN table in README.md)")
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
