<?php /* wp-admin/admin-ajax.php */ ?>
