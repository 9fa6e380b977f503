<?php /* wp-admin/index.php */ ?>
