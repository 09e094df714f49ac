package connector

import (
	"bytes"
	"database/sql/driver"
	"io"
	"reflect"
	"strings"

	"github.com/obroute/obroute/internal/merge"
)

// bufferedRows are rows read whole from one or more result sets (the EXPLAIN of each
// sub-query, the outcome of maintenance statements on each physical table), with the column
// types of the first.
type bufferedRows struct {
	columns []string
	types   []merge.ColumnType
	values  [][]driver.Value
	next    int
}

var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*bufferedRows)(nil)
	_ driver.RowsColumnTypeLength           = (*bufferedRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*bufferedRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*bufferedRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*bufferedRows)(nil)
)

// add reads r whole into b and closes it; the first rows added give the columns.
func (b *bufferedRows) add(r driver.Rows) error {
	if b.columns == nil {
		b.columns = r.Columns()
		b.types = merge.ReadColumnTypes(r)
	}
	var err error
	for {
		dest := make([]driver.Value, len(r.Columns()))
		if err = r.Next(dest); err != nil {
			break
		}
		for i, v := range dest {
			if v, ok := v.([]byte); ok {
				dest[i] = bytes.Clone(v) // the driver reuses its buffer
			}
		}
		b.values = append(b.values, dest)
	}
	if cerr := r.Close(); err == io.EOF {
		err = cerr
	}
	return err
}

// Columns implements driver.Rows.
func (b *bufferedRows) Columns() []string { return b.columns }

// Close implements driver.Rows.
func (b *bufferedRows) Close() error { return nil }

// Next implements driver.Rows.
func (b *bufferedRows) Next(dest []driver.Value) error {
	if b.next >= len(b.values) {
		return io.EOF
	}
	copy(dest, b.values[b.next])
	b.next++
	return nil
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (b *bufferedRows) ColumnTypeDatabaseTypeName(i int) string { return b.types[i].DatabaseTypeName }

// ColumnTypeLength implements driver.RowsColumnTypeLength.
func (b *bufferedRows) ColumnTypeLength(i int) (int64, bool) {
	return b.types[i].Length, b.types[i].HasLength
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (b *bufferedRows) ColumnTypeNullable(i int) (bool, bool) {
	return b.types[i].Nullable, b.types[i].HasNullable
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale.
func (b *bufferedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return b.types[i].Precision, b.types[i].Scale, b.types[i].HasPrecisionScale
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (b *bufferedRows) ColumnTypeScanType(i int) reflect.Type {
	if t := b.types[i].ScanType; t != nil {
		return t
	}
	return anyType
}

// renamedRows are the rows describing the physical table from, shown as the time-sharded table
// to: the column naming the table (SHOW INDEX's and SHOW CREATE TABLE's Table) names to, and
// SHOW CREATE TABLE's statement creates to. No other value changes, whatever it holds (a column
// default, a comment or an index named as the physical table stays as the server gave it).
type renamedRows struct {
	*rows
	from, to string
	table    int // the Table column, -1 for none; cols read: table and create are set
	create   int // the Create Table column, -1 for none
	cols     bool
}

// Next implements driver.Rows.
func (r *renamedRows) Next(dest []driver.Value) error {
	if err := r.rows.Next(dest); err != nil {
		return err
	}
	if !r.cols {
		r.cols, r.table, r.create = true, -1, -1
		for i, c := range r.Columns() {
			switch {
			case strings.EqualFold(c, "Table"):
				r.table = i
			case strings.EqualFold(c, "Create Table"):
				r.create = i
			}
		}
	}
	if r.table >= 0 && r.table < len(dest) && strings.EqualFold(text(dest[r.table]), r.from) {
		dest[r.table] = []byte(r.to)
	}
	create := "CREATE TABLE `" + r.from + "`"
	if r.create >= 0 && r.create < len(dest) {
		if s := text(dest[r.create]); strings.HasPrefix(s, create) {
			dest[r.create] = []byte("CREATE TABLE `" + r.to + "`" + s[len(create):])
		}
	}
	return nil
}
