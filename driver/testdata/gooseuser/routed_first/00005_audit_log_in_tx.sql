-- In a transaction, on audit_log only, with the routed DSN: the transaction is bound to
-- audit_log's backend, and goose's INSERT INTO goose_db_version (a table without a route)
-- follows it there, where there is no such table: MariaDB's error 1146, and goose rolls the
-- transaction back.
-- +goose Up
UPDATE audit_log SET note = 'updated by 00005' WHERE id = 1;

-- +goose Down
UPDATE audit_log SET note = 'written by 00002' WHERE id = 1;
