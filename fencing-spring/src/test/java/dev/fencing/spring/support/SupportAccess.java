package dev.fencing.spring.support;

import dev.fencing.guard.FencePoint;

import java.lang.reflect.Method;

/** For tests in other packages: the package-private fence-point lookup of a {@link FencingSupport}. */
public final class SupportAccess {

    private SupportAccess() {
    }

    public static FencePoint pointFor(FencingSupport support, Method method, Class<?> targetClass) {
        return support.points().pointFor(method, targetClass);
    }
}
