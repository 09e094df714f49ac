-- In a transaction (goose's default): items is on the default backend, like goose_db_version.
-- +goose Up
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);

-- +goose Down
DROP TABLE items;
