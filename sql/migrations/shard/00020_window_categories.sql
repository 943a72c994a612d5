-- +goose Up
-- The slots of a turbine-window per information category (IEC 61400-26-1),
-- sorted by the availability contract of the farm-day (control's
-- availability_contract, passed to TurbineWindowUpsert as contract_keys).
ALTER TABLE turbine_window ADD COLUMN category_slots integer[];
COMMENT ON COLUMN turbine_window.category_slots IS 'Slots of the window per information category, indexed by the control database''s availability_category.id (13 elements, summing to expected). NULL: computed before categories.';

-- +goose Down
ALTER TABLE turbine_window DROP COLUMN category_slots;
