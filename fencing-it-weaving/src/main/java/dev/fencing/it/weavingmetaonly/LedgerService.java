package dev.fencing.it.weavingmetaonly;

import dev.fencing.annotation.Fenced;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** A composed type-level annotation carrying {@code @Fenced}, which AspectJ's {@code @within(Fenced)} does not see. */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Fenced(resource = "meta-service")
public @interface LedgerService {
}
