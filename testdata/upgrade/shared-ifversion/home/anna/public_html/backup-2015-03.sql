CREATE TABLE wp_users (id int);
