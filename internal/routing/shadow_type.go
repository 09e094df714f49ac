package routing

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/obroute/obroute/internal/shadow"
)

// TableColumn is one column of a table as information_schema.COLUMNS describes it: what the
// shadow rule's column algorithms need to read values as the server stores and compares them.
type TableColumn struct {
	Name       string  // COLUMN_NAME
	DataType   string  // DATA_TYPE: int, decimal, varchar, …
	ColumnType string  // COLUMN_TYPE: int(10) unsigned, …
	Precision  int     // NUMERIC_PRECISION, 0 when NULL
	Scale      int     // NUMERIC_SCALE, 0 when NULL
	MaxLength  int64   // CHARACTER_MAXIMUM_LENGTH, 0 when NULL
	Collation  string  // COLLATION_NAME, "" when NULL
	Default    *string // COLUMN_DEFAULT as the server writes it ("NULL", "0", "'x'"), nil for none
	Extra      string  // EXTRA: auto_increment, VIRTUAL GENERATED, …
}

// TableColumns is a table's columns in their order. A definition without columns says the
// backend has no such table.
type TableColumns struct {
	Columns []TableColumn
	// SQLMode is the sql_mode a server session of the backend starts with (its
	// @@SESSION.sql_mode on a connection of its DSN).
	SQLMode string
}

// column returns the column named name (lower case), nil when there is none.
func (d *TableColumns) column(name string) (*TableColumn, int) {
	for i := range d.Columns {
		if identEqual(d.Columns[i].Name, name) {
			return &d.Columns[i], i
		}
	}
	return nil, -1
}

// ctKind is how a column type's values are read.
type ctKind uint8

const (
	ctOther ctKind = iota // not read: the statement is refused
	ctInt
	ctDecimal
	ctString // compared byte for byte: a binary string or a _bin collation
)

// colType is what a column's type says of the values it stores and how it compares them.
type colType struct {
	name     string
	kind     ctKind
	min, max exactNum // ctInt
	prec     int      // ctDecimal
	scale    int      // ctDecimal
	unsigned bool     // ctDecimal: UNSIGNED, a negative value is out of range (stored as 0 where not refused)
	pad      bool     // ctString: PAD SPACE, trailing spaces do not count in comparisons
	fixed    bool     // ctString: CHAR, trailing spaces are removed when stored
	maxLen   int64    // ctString: characters (0: no limit known)
	why      string   // ctOther: why its values are not read
}

var intWidths = map[string]uint{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}

// typeOf reads a column's type.
func typeOf(c *TableColumn) colType {
	t := colType{name: c.Name}
	dt := strings.ToLower(c.DataType)
	if c.Extra != "" && strings.Contains(strings.ToLower(c.Extra), "generated") {
		t.why = "a generated column, whose value the server computes"
		return t
	}
	if bits, ok := intWidths[dt]; ok {
		t.kind = ctInt
		if strings.Contains(strings.ToLower(c.ColumnType), "unsigned") {
			t.min = exactInt(0)
			t.max = exactNum{mant: new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1))}
		} else {
			t.min = exactNum{mant: new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), bits-1))}
			t.max = exactNum{mant: new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1))}
		}
		return t
	}
	switch dt {
	case "decimal", "numeric":
		t.kind, t.prec, t.scale = ctDecimal, c.Precision, c.Scale
		t.unsigned = strings.Contains(strings.ToLower(c.ColumnType), "unsigned")
		return t
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		coll := strings.ToLower(c.Collation)
		binary := coll == "" || coll == "binary"
		if !binary && !strings.HasSuffix(coll, "_bin") {
			t.why = "a " + dt + " column in collation " + c.Collation + ", whose comparisons obroute does not reproduce (it reads string columns of a binary type or a _bin collation); give the column a _bin collation or use a hint algorithm"
			return t
		}
		t.kind, t.fixed, t.maxLen = ctString, dt == "char", c.MaxLength
		t.pad = !binary && !strings.Contains(coll, "_nopad_")
		return t
	}
	t.why = "a column of type " + c.ColumnType + ", whose values obroute does not compare (it reads integer, DECIMAL and binary or _bin string columns)"
	return t
}

// store returns the value the column stores for v, as text (its canonical form: the integer,
// the DECIMAL with its scale, the string), null for NULL; ok false with why when obroute cannot
// tell exactly (a value out of range, a string that is not a number in a number column, …).
func (t *colType) store(v svalue) (text string, null bool, why string, ok bool) {
	if v.kind == svNull {
		return "", true, "", true
	}
	switch t.kind {
	case ctInt, ctDecimal:
		scale := 0
		if t.kind == ctDecimal {
			scale = t.scale
		}
		var n exactNum
		switch v.kind {
		case svExact, svHybrid:
			n = v.num.round(scale)
		case svDouble:
			if math.IsInf(v.f, 0) || math.IsNaN(v.f) {
				return "", false, "the double " + strconv.FormatFloat(v.f, 'g', -1, 64), false
			}
			if t.kind == ctInt {
				n, _ = parseExact(strconv.FormatFloat(math.RoundToEven(v.f), 'f', -1, 64))
				break
			}
			e, _ := parseExact(strconv.FormatFloat(v.f, 'f', -1, 64))
			if !e.exactAt(scale) {
				return "", false, "the double " + strconv.FormatFloat(v.f, 'g', -1, 64) + ", which the column rounds from its binary value", false
			}
			n = e.round(scale)
		case svString:
			s := strings.Trim(v.str, " \t\n\r")
			e, ok := parseScientific(s)
			if s == "" || !ok {
				return "", false, "the string " + strconv.Quote(v.str) + ", which is not a number", false
			}
			n = e.round(scale)
		}
		if !t.inRange(n) {
			return "", false, "the value " + n.text(n.scale) + ", out of the range of the column's type", false
		}
		return n.text(scale), false, "", true
	case ctString:
		var s string
		switch v.kind {
		case svString, svHybrid:
			s = v.str
		case svExact:
			s = v.num.text(v.num.scale)
		case svDouble:
			if v.f != math.Trunc(v.f) || math.Abs(v.f) >= 1e14 || math.Signbit(v.f) && v.f == 0 {
				return "", false, "the double " + strconv.FormatFloat(v.f, 'g', -1, 64) + ", whose text the server writes its own way", false
			}
			s = strconv.FormatFloat(v.f, 'f', -1, 64)
		}
		if t.fixed {
			s = strings.TrimRight(s, " ")
		}
		if t.maxLen > 0 && int64(len(s)) > t.maxLen {
			return "", false, "a string longer than the column", false
		}
		return s, false, "", true
	}
	return "", false, t.why, false
}

// inRange reports whether n (an integer, or a DECIMAL at the column's scale) fits the column.
func (t *colType) inRange(n exactNum) bool {
	switch t.kind {
	case ctInt:
		return n.cmp(t.min) >= 0 && n.cmp(t.max) <= 0
	case ctDecimal:
		if t.prec <= 0 {
			return false
		}
		if t.unsigned && n.mant.Sign() < 0 {
			return false
		}
		lim := exactNum{mant: pow10(t.prec - t.scale)}
		abs := exactNum{mant: new(big.Int).Abs(n.mant), scale: n.scale}
		return abs.cmp(lim) < 0
	}
	return true
}

// same reports whether two stored texts compare equal in the column.
func (t *colType) same(a, b string) bool {
	if t.kind == ctString && t.pad {
		return strings.TrimRight(a, " ") == strings.TrimRight(b, " ")
	}
	return a == b
}

// shadowValues is a column algorithm's set of shadow values in one column: the stored texts of
// a value_match algorithm's values, or its regex matched on stored texts.
type shadowValues struct {
	t      *colType
	set    shadow.ValueSet
	stored []string // value_match: the values as the column stores them
}

// valuesIn returns the shadow values of set in column t; why says which configured value the
// column cannot hold.
func valuesIn(t *colType, set shadow.ValueSet) (shadowValues, string) {
	sv := shadowValues{t: t, set: set}
	if t.kind == ctOther {
		return sv, t.why
	}
	for _, v := range set.Values {
		val, why, ok := stringValue(v)
		if ok {
			var null bool
			var text string
			if text, null, why, ok = t.store(val); ok && !null {
				sv.stored = append(sv.stored, text)
				continue
			}
		}
		return sv, "the configured shadow value " + strconv.Quote(v) + " is not a value of column " + t.name + " (" + why + ")"
	}
	return sv, ""
}

// has reports whether the stored text is a shadow value.
func (sv *shadowValues) has(text string) bool {
	if sv.set.Regex != nil {
		return sv.set.Regex.MatchString(text)
	}
	for _, s := range sv.stored {
		if sv.t.same(s, text) {
			return true
		}
	}
	return false
}

// tri is a truth value of SQL's three-valued logic; triMaybe also stands for "depends on the
// row's other columns".
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triMaybe
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// compared is a value as the column compares it: an exact number, a double, or bytes.
type compared struct {
	null  bool
	exact *exactNum
	f     float64
	isF   bool
	str   string
	isStr bool
}

// comparedAs returns v as column t compares it with its values.
func (t *colType) comparedAs(v svalue) (compared, string, bool) {
	if v.kind == svNull {
		return compared{null: true}, "", true
	}
	switch t.kind {
	case ctInt, ctDecimal:
		switch v.kind {
		case svExact, svHybrid:
			n := v.num
			return compared{exact: &n}, "", true
		case svDouble:
			return compared{f: v.f, isF: true}, "", true
		}
		n, why, ok := v.numeric()
		if !ok {
			return compared{}, why, false
		}
		return compared{f: n.num.float(), isF: true}, "", true // a string compares as a double
	case ctString:
		if v.kind == svString || v.kind == svHybrid {
			return compared{str: v.str, isStr: true}, "", true
		}
		return compared{}, "a number compared with the string column " + t.name + " (the server compares them as doubles, which many strings equal)", false
	}
	return compared{}, t.why, false
}

// cmp compares the stored text x with c: -1, 0, 1; ok false when they cannot be ordered here.
func (t *colType) cmp(x string, c compared) (int, bool) {
	switch {
	case c.exact != nil:
		n, _ := parseExact(x)
		return n.cmp(*c.exact), true
	case c.isF:
		n, _ := parseExact(x)
		f := n.float()
		switch {
		case f < c.f:
			return -1, true
		case f > c.f:
			return 1, true
		}
		return 0, true
	case c.isStr:
		if t.same(x, c.str) {
			return 0, true
		}
		return 1, false // unequal; the order of strings is not read
	}
	return 0, false
}

// equalStored returns the stored text the column's values equal to c have: none when no value
// of the column equals c; ok false when obroute cannot tell.
func (t *colType) equalStored(c compared) (text string, none, ok bool) {
	switch {
	case c.null:
		return "", true, true
	case c.isStr:
		if t.fixed || t.pad {
			return strings.TrimRight(c.str, " "), false, true
		}
		return c.str, false, true
	case c.exact != nil:
		scale := 0
		if t.kind == ctDecimal {
			scale = t.scale
		}
		if !c.exact.exactAt(scale) || !t.inRange(c.exact.round(scale)) {
			return "", true, true
		}
		return c.exact.text(scale), false, true
	case c.isF:
		if t.kind == ctInt {
			if c.f != math.Trunc(c.f) {
				return "", true, true
			}
			if math.Abs(c.f) > 1<<53 {
				return "", false, false
			}
			n := exactInt(int64(c.f))
			if !t.inRange(n) {
				return "", true, true
			}
			return n.text(0), false, true
		}
		e, _ := parseExact(strconv.FormatFloat(c.f, 'f', -1, 64))
		if len(e.mant.String()) > 15 || !e.exactAt(t.scale) {
			return "", false, false
		}
		if !t.inRange(e.round(t.scale)) {
			return "", true, true
		}
		return e.text(t.scale), false, true
	}
	return "", false, false
}
