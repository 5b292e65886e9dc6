package dev.fencing.spring.product.other;

import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A factory's product known by an interface that a {@code @Fenced} class of the application's packages implements,
 * while the product is another, unfenced class: the fenced class is checked, and the product is not taken for it.
 */
@Timeout(30)
class OtherFactoryProductTest {

    public interface Notes {
        void note(long id);
    }

    /** Not a bean: only a class under the application's packages that implements the product's interface. */
    public static class FencedNotes implements Notes {
        @Override
        @Fenced(resource = "notes", key = "#id")
        public void note(long id) {
        }
    }

    public static class PlainNotes implements Notes {
        @Override
        public void note(long id) {
        }
    }

    static class NotesFactoryBean implements FactoryBean<Notes> {
        @Override
        public Notes getObject() {
            return new PlainNotes();
        }

        @Override
        public Class<?> getObjectType() {
            return Notes.class;
        }
    }

    @Configuration
    @EnableFencing
    static class PlainProduct {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static NotesFactoryBean notes() {
            return new NotesFactoryBean();
        }
    }

    @Test
    void anUnfencedProductOfAnotherClassStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(PlainProduct.class)) {
            assertThat(context.getBean(Notes.class)).isInstanceOf(PlainNotes.class);
        }
    }
}
