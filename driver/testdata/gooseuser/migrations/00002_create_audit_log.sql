-- +goose NO TRANSACTION
-- audit_log is routed to another backend than goose_db_version's in the routed DSN: out of a
-- transaction, each statement runs on its table's backend.
-- +goose Up
CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(40) NOT NULL);
INSERT INTO audit_log VALUES (1, 'written by 00002');

-- +goose Down
DROP TABLE audit_log;
