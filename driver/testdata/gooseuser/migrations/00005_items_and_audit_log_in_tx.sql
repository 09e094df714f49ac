-- In a transaction, on items and then audit_log: with the routed DSN the transaction is bound
-- to items' backend by its first statement, and obroute refuses the UPDATE of audit_log, which
-- lives on another one (connector.ErrCrossBackendTx); goose rolls the transaction back.
-- +goose Up
UPDATE items SET name = 'two, by 00005' WHERE id = 2;
UPDATE audit_log SET note = 'updated by 00005' WHERE id = 1;

-- +goose Down
UPDATE audit_log SET note = 'written by 00002' WHERE id = 1;
UPDATE items SET name = 'two' WHERE id = 2;
