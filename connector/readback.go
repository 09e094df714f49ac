package connector

import (
	"context"
	"database/sql/driver"
	"fmt"
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

// readBack reads a variable's current value on s as an SQL literal.
func readBack(ctx context.Context, s *serverSession, name string) (string, error) {
	text, numeric, err := readValue(ctx, s, name)
	if err != nil {
		return "", err
	}
	if text == "NULL" || numeric {
		return text, nil
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(text) + "'", nil
}

// readValue reads a variable's current value on s: its text ("NULL" for NULL) and whether the
// server typed it as a number.
func readValue(ctx context.Context, s *serverSession, name string) (text string, numeric bool, err error) {
	rows, err := s.query(ctx, "SELECT "+variableRef(name), nil, false)
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
	switch x := dest[0].(type) {
	case nil:
		return "NULL", false, nil
	case []byte:
		return string(x), numeric, nil
	case string:
		return x, numeric, nil
	default:
		return fmt.Sprint(x), true, nil
	}
}

func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
