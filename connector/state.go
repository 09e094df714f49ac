package connector

import (
	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/routing"
)

var mysqlInvalidConn = mysql.ErrInvalidConn

// sessionState is the client session's record of its session variables and current database,
// versioned so that a server session can tell in one comparison whether it is behind.
type sessionState struct {
	version  uint64
	vars     []routing.SessionVar // one entry per variable, latest assignment, first-set order
	database string
}

// record adds the assignments of one SET statement.
func (st *sessionState) record(vars []routing.SessionVar) {
	for _, v := range vars {
		replaced := false
		for i := range st.vars {
			if st.vars[i].Name == v.Name {
				st.vars[i] = v
				replaced = true
				break
			}
		}
		if !replaced {
			st.vars = append(st.vars, v)
		}
	}
	st.version++
}

// use records the current database.
func (st *sessionState) use(db string) {
	st.database = db
	st.version++
}
