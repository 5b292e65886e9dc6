package dev.fencing.it.weavingmeta;

import dev.fencing.annotation.Fenced;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A composed annotation of an application's: {@code @Fenced} as a meta-annotation, which Spring's annotation search
 * (PROXY mode) finds and AspectJ's {@code execution(@Fenced ...)} pointcuts do not.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Fenced(resource = "meta-ledger")
public @interface LedgerWrite {
}
