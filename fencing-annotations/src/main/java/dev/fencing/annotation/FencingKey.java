package dev.fencing.annotation;

/**
 * Implemented by a type (typically an entity) that is used as a {@code @Fenced} key value: its
 * {@link #fencingKey()} text, not its {@code toString()}, names the fenced entity, so the effective resource is
 * {@code resource + ":" + fencingKey()}. The text must be stable (the same entity always yields the same text, two
 * entities never share one), non-blank, and should be short: the effective resource is limited to 256 characters.
 */
public interface FencingKey {

    /**
     * The entity's key text, e.g. its primary key: {@code String.valueOf(id)}.
     *
     * @return a stable, non-blank text identifying this entity
     */
    String fencingKey();
}
