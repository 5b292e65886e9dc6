package dev.fencing.web;

import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.mvc.method.annotation.ExceptionHandlerExceptionResolver;

import java.io.File;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * spring-tx is an optional dependency: {@code @Import(FencingExceptionAdvice.class)} must work without it (and
 * leave out {@link FencingTransientFailureAdvice}, whose handler names a spring-tx type), and register both with it.
 * Without spring-tx is simulated by a class loader that hides {@code org.springframework.dao} and
 * {@code org.springframework.transaction} and loads everything else itself.
 */
class AdviceWithoutSpringTxTest {

    @Configuration
    @Import(FencingExceptionAdvice.class)
    static class App {
    }

    /**
     * Runs inside whichever class loader loaded it: starts {@link App} and reports what Spring MVC's resolver found.
     */
    public static class Probe implements Callable<List<String>> {
        @Override
        public List<String> call() throws Exception {
            try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(App.class)) {
                ExceptionHandlerExceptionResolver resolver = new ExceptionHandlerExceptionResolver();
                resolver.setApplicationContext(context);
                resolver.afterPropertiesSet();
                List<String> found = new ArrayList<>();
                resolver.getExceptionHandlerAdviceCache().forEach((advice, methods) -> {
                    Method handler = methods.resolveMethod(new LockAcquisitionException("r", "m"));
                    found.add(advice.getBeanType().getSimpleName()
                            + (handler == null ? "" : ": lock not acquired is handled by " + handler.getName()));
                });
                return found;
            }
        }
    }

    @Test
    void withSpringTxBothAdvicesAreRegistered() throws Exception {
        assertThat(new Probe().call()).containsExactlyInAnyOrder(
                "FencingExceptionAdvice: lock not acquired is handled by lockNotAcquired",
                "FencingTransientFailureAdvice");
    }

    @Test
    void withoutSpringTxTheAdviceStillLoadsAndAnswers() throws Exception {
        try (URLClassLoader withoutTx = new HidingClassLoader(classpath(),
                "org.springframework.dao.", "org.springframework.transaction.")) {
            assertThatThrownBy(() -> withoutTx.loadClass("org.springframework.dao.ConcurrencyFailureException"))
                    .isInstanceOf(ClassNotFoundException.class);
            Class<?> probe = withoutTx.loadClass(Probe.class.getName());
            assertThat(probe).isNotSameAs(Probe.class);
            ClassLoader previous = Thread.currentThread().getContextClassLoader();
            Thread.currentThread().setContextClassLoader(withoutTx);
            try {
                @SuppressWarnings("unchecked")
                List<String> found = ((Callable<List<String>>) probe.getConstructor().newInstance()).call();
                assertThat(found)
                        .containsExactly("FencingExceptionAdvice: lock not acquired is handled by lockNotAcquired");
            } finally {
                Thread.currentThread().setContextClassLoader(previous);
            }
        }
    }

    private static URL[] classpath() throws MalformedURLException {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<URL> urls = new ArrayList<>();
        for (String entry : path.split(File.pathSeparator)) {
            if (!entry.isBlank()) {
                urls.add(new File(entry).toURI().toURL());
            }
        }
        return urls.toArray(URL[]::new);
    }

    /** Loads every class itself (JDK classes from the platform), except those under the hidden packages. */
    private static final class HidingClassLoader extends URLClassLoader {
        private final String[] hidden;

        HidingClassLoader(URL[] urls, String... hidden) {
            super("without-spring-tx", urls, ClassLoader.getPlatformClassLoader());
            this.hidden = hidden;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            for (String prefix : hidden) {
                if (name.startsWith(prefix)) {
                    throw new ClassNotFoundException(name + " (hidden: simulating an application without spring-tx)");
                }
            }
            return super.loadClass(name, resolve);
        }

        @Override
        public URL getResource(String name) {
            for (String prefix : hidden) {
                if (name.startsWith(prefix.replace('.', '/'))) {
                    return null;
                }
            }
            return super.getResource(name);
        }
    }
}
