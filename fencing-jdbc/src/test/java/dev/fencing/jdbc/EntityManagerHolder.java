package dev.fencing.jdbc;

/**
 * Stands in for Spring ORM's {@code org.springframework.orm.jpa.EntityManagerHolder} (not on this module's class
 * path): what a JPA transaction binds, which the store recognises by its simple name.
 */
final class EntityManagerHolder {
}
