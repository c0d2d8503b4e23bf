/**
 * Warden's settings, each declared once: a {@link dev.warden.lock.settings.Setting} (key, parser, default,
 * meaning) in one {@link dev.warden.lock.settings.SettingTable} per area. The lock client's common
 * settings are {@link dev.warden.lock.settings.LockSettings}; each backend's are its provider's
 * {@code settings()}; the quota engine and the ledger declare theirs in their modules. Reading,
 * validation (every problem in one message) and the reference in {@code docs/settings.md} all come from
 * the tables.
 */
package dev.warden.lock.settings;
