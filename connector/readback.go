package connector

import (
	"context"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// isOn reads a boolean system variable's value as MySQL does (1, ON, TRUE).
func isOn(v string) bool { return v != "0" && v != "off" && v != "false" }

// variableRef is how SQL names a variable of SessionVar.Name: a user variable quoted (its name
// may hold any character), a system variable in the session scope.
func variableRef(name string) string {
	if user, ok := strings.CutPrefix(name, "@"); ok {
		return "@`" + strings.ReplaceAll(user, "`", "``") + "`"
	}
	return "@@session." + name
}

// readBackStart starts the statement that reads variables back (readLiterals).
const readBackStart = "SELECT FOUND_ROWS(), ROW_COUNT()"

// oneRow ends each SELECT obroute sends itself on a client session's server session to read
// one row: sql_select_limit, which the client session may have set (0 answers no row), limits
// every SELECT but one with a LIMIT clause of its own.
const oneRow = " LIMIT 1"

// literal is a variable's value read back: as SQL that gives the same value on any server
// session, whatever its sql_mode or character set, and in lower case for comparisons.
type literal struct {
	sql, value string
}

// readLiterals reads the current values of the variables names on s in one statement, and what
// FOUND_ROWS() and ROW_COUNT() answered before it (a SELECT, it changes both). A number
// is written as the server wrote it (a DOUBLE with an exponent, so that it stays one); a user
// variable's string with its character set and collation (_utf8mb4 X'…' COLLATE …, which no
// sql_mode reads otherwise); a system variable's string quoted, or in hexadecimal when it
// holds a backslash, which NO_BACKSLASH_ESCAPES reads otherwise.
func readLiterals(ctx context.Context, s *serverSession, names []string) (lits []literal, found, rowCount int64, err error) {
	var b strings.Builder
	b.WriteString(readBackStart)
	cols := make([]int, len(names)) // the first column of each variable
	n := 2
	for i, name := range names {
		b.WriteString(", ")
		ref := variableRef(name)
		cols[i] = n
		if strings.HasPrefix(name, "@") {
			fmt.Fprintf(&b, "%s, HEX(%s), CHARSET(%s), COLLATION(%s)", ref, ref, ref, ref)
			n += 4
		} else {
			fmt.Fprintf(&b, "%s, HEX(%s)", ref, ref)
			n += 2
		}
	}
	b.WriteString(oneRow)
	rows, err := s.query(ctx, b.String(), nil, false)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rows.Close()
	dest := make([]driver.Value, n)
	if err := rows.Next(dest); err != nil {
		return nil, 0, 0, errorf("obroute: reading back %s: %w", strings.Join(names, ", "), err)
	}
	for i, p := range [2]*int64{&found, &rowCount} {
		text, _ := valueText(dest[i])
		*p, _ = strconv.ParseInt(text, 10, 64)
	}
	ct, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	out := make([]literal, len(names))
	for i, name := range names {
		c := cols[i]
		typ := ""
		if ct != nil {
			typ = ct.ColumnTypeDatabaseTypeName(c)
		}
		out[i] = literalOf(name, dest[c:], typ)
	}
	return out, found, rowCount, nil
}

// literalOf renders the value v[0] of variable name, of database type typ, with the columns
// readLiterals read after it (HEX, and for a user variable CHARSET and COLLATION).
func literalOf(name string, v []driver.Value, typ string) literal {
	text, ok := valueText(v[0])
	if !ok {
		if strings.HasPrefix(name, "@") {
			return literal{typedNull(typ, v), "null"}
		}
		return literal{"NULL", "null"}
	}
	switch strings.TrimPrefix(typ, "UNSIGNED ") {
	case "DECIMAL":
		if !strings.ContainsRune(text, '.') {
			// 0 would be an integer elsewhere: a DECIMAL stays one.
			return literal{"CAST(" + text + " AS DECIMAL(65,0))", strings.ToLower(text)}
		}
		return literal{text, strings.ToLower(text)}
	case "BIGINT", "INT", "TINYINT", "SMALLINT", "MEDIUMINT":
		if strings.HasPrefix(typ, "UNSIGNED ") && strings.HasPrefix(name, "@") {
			// A user variable keeps the unsigned flag of its value (GET DIAGNOSTICS @n = NUMBER,
			// CAST(… AS UNSIGNED) INTO @v): a bare literal would make it signed.
			return literal{"CAST(" + text + " AS UNSIGNED)", strings.ToLower(text)}
		}
		return literal{text, strings.ToLower(text)}
	case "GEOMETRY":
		// The server's form: the SRID (4 bytes, little-endian), then the WKB.
		if hx, _ := valueText(v[1]); len(hx) > 8 {
			srid, _ := strconv.ParseUint(hx[6:8]+hx[4:6]+hx[2:4]+hx[0:2], 16, 32)
			return literal{fmt.Sprintf("ST_GeomFromWKB(X'%s', %d)", hx[8:], srid), strings.ToLower(text)}
		}
	case "DOUBLE", "FLOAT":
		if !strings.ContainsAny(text, "eE") {
			return literal{text + "e0", strings.ToLower(text)}
		}
		return literal{text, strings.ToLower(text)}
	}
	hx, _ := valueText(v[1])
	if strings.HasPrefix(name, "@") {
		charset, _ := valueText(v[2])
		collation, _ := valueText(v[3])
		return literal{fmt.Sprintf("_%s X'%s' COLLATE %s", charset, hx, quoteIdent(collation)), strings.ToLower(text)}
	}
	if strings.ContainsRune(text, '\\') {
		return literal{"X'" + hex.EncodeToString([]byte(text)) + "'", strings.ToLower(text)}
	}
	return literal{"'" + strings.ReplaceAll(text, "'", "''") + "'", strings.ToLower(text)}
}

// typedNull is a user variable's NULL of the type the server holds it with (v as literalOf
// reads it): a NULL a numeric or string expression gave keeps that type, which SELECT @v and
// COERCIBILITY(@v) show; NULL itself has none.
func typedNull(typ string, v []driver.Value) string {
	switch strings.TrimPrefix(typ, "UNSIGNED ") {
	case "BIGINT", "INT", "TINYINT", "SMALLINT", "MEDIUMINT":
		if strings.HasPrefix(typ, "UNSIGNED ") {
			return "CAST(NULL AS UNSIGNED)"
		}
		return "CAST(NULL AS SIGNED)"
	case "DECIMAL":
		return "CAST(NULL AS DECIMAL)"
	case "DOUBLE", "FLOAT":
		return "CAST(NULL AS DOUBLE)"
	case "VARCHAR", "CHAR", "TEXT", "MEDIUMTEXT", "LONGTEXT", "TINYTEXT":
		charset, _ := valueText(v[2])
		collation, _ := valueText(v[3])
		if charset != "" && charset != "binary" && collation != "" {
			return fmt.Sprintf("CAST(NULL AS CHAR CHARACTER SET %s) COLLATE %s", quoteIdent(charset), quoteIdent(collation))
		}
	}
	return "NULL"
}

// valueText returns a column value as text; false for NULL.
func valueText(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case []byte:
		return string(x), true
	case string:
		return x, true
	default:
		return fmt.Sprint(x), true
	}
}

// readValue reads a variable's current value on s: its text ("NULL" for NULL) and whether the
// server typed it as a number.
func readValue(ctx context.Context, s *serverSession, name string) (text string, numeric bool, err error) {
	rows, err := s.query(ctx, "SELECT "+variableRef(name)+oneRow, nil, false)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return "", false, errorf("obroute: reading back %s: %w", name, err)
	}
	if ct, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		switch ct.ColumnTypeDatabaseTypeName(0) {
		case "BIGINT", "INT", "DECIMAL", "DOUBLE", "FLOAT", "TINYINT", "SMALLINT", "MEDIUMINT":
			numeric = true
		}
	}
	text, ok := valueText(dest[0])
	if !ok {
		return "NULL", false, nil
	}
	switch dest[0].(type) {
	case []byte, string:
		return text, numeric, nil
	}
	return text, true, nil
}

func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
