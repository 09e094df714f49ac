package config

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// filler gives every field reachable from Config a distinct value.
type filler struct{ n int }

func (f *filler) next() int { f.n++; return f.n }

// fill sets v, of any type a Config holds, to values of its own; list elements get names with
// and without dots.
func (f *filler) fill(t *testing.T, v reflect.Value, where string) {
	switch {
	case v.Type() == reflect.TypeOf(Duration(0)) || v.Type() == reflect.TypeOf(time.Duration(0)):
		v.SetInt(int64(time.Duration(f.next()) * time.Second))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if fld := v.Type().Field(i); fld.IsExported() && yamlName(fld) != "" {
				f.fill(t, v.Field(i), where+"."+fld.Name)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(t, v.Elem(), where)
	case reflect.Slice:
		n := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			f.fill(t, n.Index(i), where+"[]")
		}
		if k := listKeyField(v.Type().Elem()); k >= 0 {
			n.Index(0).Field(k).SetString(fmt.Sprintf("first%d", f.next()))
			n.Index(1).Field(k).SetString(fmt.Sprintf("with.dot%d", f.next()))
		}
		v.Set(n)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 2; i++ {
			m.SetMapIndex(reflect.ValueOf(fmt.Sprintf("key%d", f.next())), reflect.ValueOf(fmt.Sprintf("value%d", f.next())))
		}
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprintf("text%d", f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(f.next()))
	default:
		t.Fatalf("%s: type %s is not covered by this test: teach it (and the DSN) the new type", where, v.Type())
	}
}

// dsnItems writes v as DSN items, the key of each the path of its YAML names, list elements
// named by their key field: the rule the README states, written here independently of the parser.
func dsnItems(v reflect.Value, path string, out *[]string) {
	switch {
	case v.Type() == reflect.TypeOf(Duration(0)):
		*out = append(*out, path+"="+time.Duration(v.Int()).String())
		return
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		*out = append(*out, path+"="+time.Duration(v.Int()).String())
		return
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if fld := v.Type().Field(i); fld.IsExported() && yamlName(fld) != "" {
				dsnItems(v.Field(i), join(yamlName(fld)), out)
			}
		}
	case reflect.Pointer:
		dsnItems(v.Elem(), path, out)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String {
			parts := make([]string, v.Len())
			for i := range parts {
				parts[i] = v.Index(i).String()
			}
			*out = append(*out, path+"="+strings.Join(parts, ","))
			return
		}
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			var keyName string
			for _, k := range []string{"name", "table", "production"} {
				if j := fieldIndex(e.Type(), k); j >= 0 {
					keyName = e.Field(j).String()
					break
				}
			}
			for j := 0; j < e.NumField(); j++ {
				fld := e.Type().Field(j)
				if !fld.IsExported() || yamlName(fld) == "" || e.Field(j).String() == keyName && fld.Type.Kind() == reflect.String {
					continue
				}
				dsnItems(e.Field(j), path+"."+keyName+"."+yamlName(fld), out)
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			*out = append(*out, path+"."+k.String()+"="+v.MapIndex(k).String())
		}
	case reflect.String:
		*out = append(*out, path+"="+v.String())
	case reflect.Bool:
		*out = append(*out, path+"="+strconv.FormatBool(v.Bool()))
	case reflect.Int:
		*out = append(*out, path+"="+strconv.FormatInt(v.Int(), 10))
	}
}

// Every field of Config, found by reflection so that a new one is caught, set in the DSN form
// and in the YAML form, reads back as the same Config.
func TestEveryFieldInDSNAndYAML(t *testing.T) {
	var want Config
	(&filler{}).fill(t, reflect.ValueOf(&want).Elem(), "Config")

	var items []string
	dsnItems(reflect.ValueOf(want), "", &items)
	fromDSN, err := parseDSN(Prefix + strings.Join(items, ";"))
	if err != nil {
		t.Fatalf("DSN form: %v\nitems: %q", err, items)
	}
	data, err := yaml.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := ParseYAML(data)
	if err != nil {
		t.Fatalf("YAML form: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(fromDSN, &want) {
		t.Errorf("DSN form read as\n%+v\nwant\n%+v\nitems: %q", fromDSN, &want, items)
	}
	if !reflect.DeepEqual(fromYAML, &want) {
		t.Errorf("YAML form read as\n%+v\nwant\n%+v\nYAML:\n%s", fromYAML, &want, data)
	}
	if len(items) < 40 {
		t.Errorf("only %d DSN items for the whole Config: the walk missed fields", len(items))
	}
}

// A Go field is named as its YAML name and DSN key: enable_cached_server is EnableCachedServer.
func TestGoNamesMatchYAMLNames(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(tp reflect.Type) {
		for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Slice || tp.Kind() == reflect.Map {
			tp = tp.Elem()
		}
		if tp.Kind() != reflect.Struct || seen[tp] {
			return
		}
		seen[tp] = true
		for i := 0; i < tp.NumField(); i++ {
			f := tp.Field(i)
			name := yamlName(f)
			if !f.IsExported() || name == "" {
				continue
			}
			if !strings.EqualFold(strings.ReplaceAll(name, "_", ""), f.Name) {
				t.Errorf("%s.%s is read as %q: give the Go field and the YAML/DSN name the same words", tp.Name(), f.Name, name)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(Config{}))
}

// keyPatterns lists every DSN key with placeholders for names (NAME, TABLE, PRODUCTION).
func keyPatterns(tp reflect.Type, path string, out *[]string) {
	for tp.Kind() == reflect.Pointer {
		tp = tp.Elem()
	}
	if tp == reflect.TypeOf(Duration(0)) || tp == reflect.TypeOf(time.Duration(0)) {
		*out = append(*out, path)
		return
	}
	switch tp.Kind() {
	case reflect.Struct:
		for i := 0; i < tp.NumField(); i++ {
			f := tp.Field(i)
			if name := yamlName(f); f.IsExported() && name != "" {
				p := name
				if path != "" {
					p = path + "." + name
				}
				keyPatterns(f.Type, p, out)
			}
		}
	case reflect.Slice:
		if tp.Elem().Kind() != reflect.Struct {
			*out = append(*out, path)
			return
		}
		k := listKeyField(tp.Elem())
		key := strings.ToUpper(yamlName(tp.Elem().Field(k)))
		for i := 0; i < tp.Elem().NumField(); i++ {
			f := tp.Elem().Field(i)
			if name := yamlName(f); f.IsExported() && name != "" && i != k {
				keyPatterns(f.Type, path+"."+key+"."+name, out)
			}
		}
	case reflect.Map:
		*out = append(*out, path+".KEY")
	default:
		*out = append(*out, path)
	}
}

// The README's DSN table lists every key.
func TestReadmeListsEveryKey(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	keyPatterns(reflect.TypeOf(Config{}), "", &keys)
	for _, k := range keys {
		k = strings.Replace(k, "routes.KEY", "routes.TABLE", 1)
		if !strings.Contains(string(readme), "| `"+k) {
			t.Errorf("README.md's DSN table has no row for `%s`", k)
		}
	}
}
