package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/obroute/obroute/metadata"
)

// The texts data set tests what the merge must not compute itself: text compared under many
// collations (and an explicit COLLATE), MIN and MAX of text, AVG and SUM of divisions under any
// div_precision_increment, and the column types of one server. Its strings are collation
// traps, drawn from fixed lists independently of the code under test: case variants, accents
// (precomposed and combining), ß and ss, Æ and ae, Å, Ä, Ö and their Nordic orders, trailing
// spaces and a trailing tab (which sorts below the padding space), characters beyond U+FFFF.

// CreateTextsSQL creates one table of the texts data set; %s is the table name. s_def has the
// table's default collation (utf8mb4's default).
const CreateTextsSQL = `CREATE TABLE %s (
  id BIGINT NOT NULL PRIMARY KEY,
  t_time DATETIME NOT NULL,
  s_def VARCHAR(24) NULL,
  s_bin VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  s_lat VARCHAR(24) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL,
  s_uni VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,
  s_uca VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci NULL,
  s_nop VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci NULL,
  note TEXT NULL,
  e ENUM('new', 'paid', 'shipped', 'Refunded') NOT NULL,
  amount DECIMAL(12,2) NULL,
  qty INT NULL,
  KEY idx_time (t_time)
) DEFAULT CHARSET=utf8mb4`

// TextColumns are the columns of the texts tables, in CreateTextsSQL order.
var TextColumns = []string{"id", "t_time", "s_def", "s_bin", "s_lat", "s_uni", "s_uca", "s_nop", "note", "e", "amount", "qty"}

// StringColumns are the text columns with their collations ("" for the table's default).
var StringColumns = []struct{ Name, Collation string }{
	{"s_def", ""}, {"s_bin", "utf8mb4_bin"}, {"s_lat", "latin1_swedish_ci"}, {"s_uni", "utf8mb4_unicode_ci"},
	{"s_uca", "utf8mb4_uca1400_ai_ci"}, {"s_nop", "utf8mb4_general_nopad_ci"},
}

// TextTraps are the strings of the data set.
var TextTraps = []string{
	"apple", "Apple", "APPLE", "apple ", "apple  ", "apple\t", "äpple", "Äpple", "applé",
	"Straße", "STRASSE", "strasse", "Strasse", "straße ", "ß", "ss", "SS", "s",
	"Æble", "æble", "AEBLE", "aeble", "Aeble", "Ærø", "aero",
	"Åsa", "åsa", "Aasa", "Asa", "Ärlig", "arlig", "Örn", "örn", "Orn", "Oern", "Ødegaard", "odegaard", "Zebra", "zebra", "Zz",
	"café", "cafe", "CAFÉ", "Cafe ", "cafe\u0301", "naïve", "naive",
	"smile😀", "smile😁", "smile", "😀", "😁", "🎉x",
	"", " ", "a", "A", "a ", "a\t", "b", "B", "y", "ü", "ÿ", "Y",
}

// latin1 reports whether s can be stored in a latin1 column unchanged.
func latin1(s string) bool {
	for _, r := range s {
		if r > 0xFF {
			return false
		}
	}
	return true
}

// Text is one row of the texts data set; nil pointers are NULLs.
type Text struct {
	ID     int64
	Time   time.Time
	S      [6]*string // s_def, s_bin, s_lat, s_uni, s_uca, s_nop
	Note   *string
	E      string
	Amount *string
	Qty    *int64
}

var enumValues = []string{"new", "paid", "shipped", "Refunded"}

// GenerateTexts returns n rows with times in [from, to), deterministic for a seed. Amounts are
// negative as well as positive, with repeats; about one value in eight is NULL.
func GenerateTexts(seed uint64, from, to time.Time, n int) []Text {
	rng := rand.New(rand.NewPCG(seed, 0x7e47))
	var lat []string
	for _, s := range TextTraps {
		if latin1(s) {
			lat = append(lat, s)
		}
	}
	span := to.Sub(from) / time.Second
	out := make([]Text, 0, n)
	pick := func(pool []string) *string {
		if rng.IntN(8) == 0 {
			return nil
		}
		s := pool[rng.IntN(len(pool))]
		return &s
	}
	for i := range n {
		r := Text{ID: int64(i + 1), E: enumValues[rng.IntN(len(enumValues))]}
		r.Time = from.Add(time.Duration(rng.Int64N(int64(span))) * time.Second)
		for c := range r.S {
			pool := TextTraps
			if c == 2 {
				pool = lat
			}
			r.S[c] = pick(pool)
		}
		r.Note = pick(TextTraps)
		if rng.IntN(8) != 0 {
			a := fmt.Sprintf("%d.%02d", rng.IntN(2000)-600, []int{0, 1, 33, 50, 67, 99}[rng.IntN(6)])
			if strings.HasPrefix(a, "-0") || a == "0.00" {
				a = "0.01"
			}
			r.Amount = &a
		}
		if rng.IntN(8) != 0 {
			q := int64(rng.IntN(40) - 5)
			r.Qty = &q
		}
		out = append(out, r)
	}
	return out
}

// SplitTexts assigns each row to the table whose span holds its time, "" when none does.
func SplitTexts(rows []Text, tables []metadata.Table) map[string][]Text {
	return splitBy(rows, tables, func(r Text) time.Time { return r.Time })
}

// InsertTextsSQL returns INSERT statements with ? arguments loading rows into table, at most
// batch rows each, and their arguments.
func InsertTextsSQL(table string, rows []Text, batch int) (stmts []string, args [][]any) {
	for start := 0; start < len(rows); start += batch {
		part := rows[start:min(start+batch, len(rows))]
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(TextColumns, ", "))
		var a []any
		for i, r := range part {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + strings.TrimSuffix(strings.Repeat("?, ", len(TextColumns)), ", ") + ")")
			a = append(a, r.ID, r.Time.Format(time.DateTime))
			for _, s := range r.S {
				a = append(a, orNil(s))
			}
			a = append(a, orNil(r.Note), r.E, orNil(r.Amount))
			if r.Qty == nil {
				a = append(a, nil)
			} else {
				a = append(a, *r.Qty)
			}
		}
		stmts, args = append(stmts, b.String()), append(args, a)
	}
	return stmts, args
}

func orNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
